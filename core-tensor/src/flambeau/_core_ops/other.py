"""Declarations of PyTorch's "other" ops, each a composite written with flambeau ops.

einsum, tensordot (:mod:`._contract`), kron, cross, cdist, trace, block_diag, cartesian_prod,
combinations, renorm, diff, cov, corrcoef and vander. Composites run on every backend and get
their gradients from the ops they are built from; each checks its arguments with PyTorch's
wording before any work.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Sequence

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import broadcast_shapes, fmt_shape, type_name, wrap_dim
from . import _contract
from ._docs_blas_other import DOCS
from .shape import result_of


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _has_data(t: Tensor) -> bool:
    """Whether values can be read (a meta tensor has shapes and dtypes only)."""
    return t.device.type != "meta"


def _new(like: Tensor, shape: Sequence[int], dtype: Any, fill: float = 0) -> Tensor:
    return like.new_full(tuple(shape), fill, dtype=dtype)


# -- products ----------------------------------------------------------------------------

def _kron(input: Tensor, other: Tensor) -> Tensor:
    nd = max(input._data.ndim, other._data.ndim)
    sa = (1,) * (nd - input._data.ndim) + tuple(input._data.shape)
    sb = (1,) * (nd - other._data.ndim) + tuple(other._data.shape)
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] laid out as (i0*j0, i1*j1, ...)
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    return (a * b).reshape([x * y for x, y in zip(sa, sb)])


_CROSS_WARNING = ("Using flambeau.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                  "explicitly or simply use flambeau.linalg.cross.\nThe default value of dim will change to agree with "
                  "that of linalg.cross in a future release.")


def _cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        warnings.warn(_CROSS_WARNING, UserWarning, stacklevel=3)
        if input._data.ndim != other._data.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        shape = broadcast_shapes(input._data.shape, other._data.shape)
        sizes = [i for i, s in enumerate(shape) if s == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes[0]
    return _fn("linalg_cross")(input, other, dim=dim)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
           compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x._data.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {type_name(x._dtype)}")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                           f"X2: {x2._data.shape[-1]}")
    if x1._dtype is not x2._dtype:
        raise RuntimeError(f"expected scalar type {type_name(x1._dtype)} but found {type_name(x2._dtype)}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = broadcast_shapes(x1._data.shape[:-2], x2._data.shape[:-2])
    r1, r2, c = x1._data.shape[-2], x2._data.shape[-2], x1._data.shape[-1]
    x1 = x1.expand(batch + (r1, c))
    x2 = x2.expand(batch + (r2, c))
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                         (compute_mode == _CDIST_MODES[0] and (r1 > 25 or r2 > 25)))
    if use_mm:
        # |a-b|^2 = |a|^2 - 2 a.b + |b|^2: one matrix product instead of an (r1, r2, c) difference
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True)
        squared = (n1 - 2 * x1.matmul(x2.transpose(-1, -2))) + n2.transpose(-1, -2)
        # rounding can leave tiny negatives, and sqrt's slope at 0 is infinite: zero distances get
        # a zero gradient, as PyTorch's (the sqrt sees 1 there, and its result is not used)
        positive = squared > 0
        where = _fn("where")
        return where(positive, where(positive, squared, squared.new_ones(())).sqrt(), squared.new_zeros(()))
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _fn("linalg_vector_norm")(diff, float(p), -1)


def _trace(input: Tensor) -> Tensor:
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    if input._dtype is _dtypes.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return input.diagonal().sum()


# -- building tensors from tensors -------------------------------------------------------

def _block_diag(tensors: Sequence[Tensor]) -> Tensor:
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(f"flambeau.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._data.ndim} dimensions")
    dtype = _dtypes.result_type_of([t._dtype for t in tensors], [], [])
    blocks = [t.reshape(1, -1) if t._data.ndim < 2 else t for t in tensors]
    cols = sum(b._data.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b._data.shape
        parts = [_new(b, (r, left), dtype), b.to(dtype), _new(b, (r, cols - left - c), dtype)]
        rows.append(_fn("cat")(parts, 1))
        left += c
    return _fn("cat")(rows, 0)


def _vector_check(t: Tensor) -> None:
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {fmt_shape(t._data.shape)}")


def _cartesian_prod(tensors: Sequence[Tensor]) -> Tensor:
    for t in tensors:
        _vector_check(t)
    if len(tensors) == 1:
        return tensors[0].clone()
    for t in tensors[1:]:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = _fn("meshgrid")(list(tensors), indexing="ij")
    return _fn("stack")([g.reshape(-1) for g in grids], 1)


def _combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    _vector_check(input)
    if isinstance(r, bool) or not isinstance(r, int):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _new(input, (0,), input._dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = [i for combo in pick(range(input._data.shape[0]), r) for i in combo]
    if not index:
        return _new(input, (0, r), input._dtype)
    from .._creation import tensor

    flat = tensor(index, dtype=_dtypes.int64, device=input.device)
    return input.index_select(0, flat).reshape(-1, r)


def _vander(x: Tensor, N: Any = None, increasing: bool = False) -> Tensor:
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0]
    N = n if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._dtype if x._dtype.is_floating_point or x._dtype.is_complex else _dtypes.int64
    x = x.to(dtype)
    if N == 0:
        return _new(x, (n, 0), dtype)
    # powers by a running product along the columns (differentiable, exact for integers)
    columns = _fn("cat")([_new(x, (n, 1), dtype, 1), x.unsqueeze(1).expand(n, N - 1)], 1)
    powers = columns.cumprod(1)
    return powers if increasing else powers.flip((1,))


# -- rows, differences and statistics ----------------------------------------------------

def _renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    if isinstance(p, Tensor):
        p = p.item()
    if isinstance(maxnorm, Tensor):
        maxnorm = maxnorm.item()
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input._data.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input._data.ndim} dimensions")
    dim = wrap_dim(dim, input._data.ndim)
    others = tuple(d for d in range(input._data.ndim) if d != dim)
    norms = _fn("linalg_vector_norm")(input, p, others, True)
    # PyTorch's rule: rows over the limit are scaled to maxnorm / (norm + 1e-7)
    scale = _fn("where")(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    return input * scale.to(input._dtype)


def _diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
          append: Tensor | None = None) -> Tensor:
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for extra in (prepend, append):
        if extra is not None and extra._data.ndim != input._data.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    dim = wrap_dim(dim, input._data.ndim)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        input = _fn("cat")(parts, dim)
    result = input
    for _ in range(n):
        length = result._data.shape[dim]
        if length == 0:
            break
        after, before = result.narrow(dim, 1, length - 1), result.narrow(dim, 0, length - 1)
        result = after != before if result._dtype is _dtypes.bool else after - before
    return result if result is not input or n else input.clone()


def _weights_check(name: str, w: Tensor | None, observations: int, floating: bool) -> None:
    if w is None:
        return
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w._data.ndim} dimensions")
    ok = w._dtype.is_floating_point if floating else w._dtype._category == _dtypes._INT
    if not ok:
        kind = "floating point" if floating else "integral"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{type_name(w._dtype)} dtype")
    numel = w._data.shape[0] if w._data.ndim else 1
    if numel != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {numel} != {observations}")
    if _has_data(w) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


_DOF_WARNING = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                "observations.")


def _cov(input: Tensor, correction: Any = 1, fweights: Tensor | None = None,
         aweights: Tensor | None = None) -> Tensor:
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    x = input.reshape(1, -1) if input._data.ndim < 2 else input
    observations = x._data.shape[1]
    _weights_check("fweights", fweights, observations, floating=False)
    _weights_check("aweights", aweights, observations, floating=True)
    dtype = input._dtype if input._dtype.is_floating_point or input._dtype.is_complex else \
        _dtypes.get_default_dtype()
    if aweights is not None and aweights._dtype.is_floating_point:
        dtype = _dtypes.result_type_of([dtype, aweights._dtype], [], [])
    x = x.to(dtype)
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        factor: Any = observations - correction
        if factor <= 0:
            warnings.warn(_DOF_WARNING, UserWarning, stacklevel=3)
            factor = 0
    else:
        # weights stay real for a complex input (the clamp below needs an ordered type)
        w = w.to(_dtypes.float64 if dtype is _dtypes.complex128 else
                 _dtypes.float32 if dtype is _dtypes.complex64 else dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            factor = w_sum
        elif aweights is None:
            factor = w_sum - correction
        else:
            factor = w_sum - correction * (w * aweights).sum() / w_sum
        factor = factor.clamp_min(0)
    centred = x - avg.unsqueeze(1)
    weighted = centred if w is None else centred * w
    c = weighted.mm(centred.t().conj()) / factor
    return c.squeeze()


def _corrcoef(input: Tensor) -> Tensor:
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    c = _cov(input)
    if c._data.ndim == 0:
        return c / c
    std = c.diagonal()
    std = (std.real if std._dtype.is_complex else std).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c._dtype.is_complex:
        return _fn("complex")(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


def declarations() -> list[OpDecl]:
    def decl(name: str, sig: str, fn: Any, doc: str, **kw: Any) -> OpDecl:
        kw.setdefault("method", False)
        return OpDecl(name, sig, result_of(fn), composite=fn, doc=DOCS.get(name, doc), **kw)

    return [
        decl("einsum", "(equation, operands: TensorList)", _contract.einsum,
             "Sums products of the operands' elements over the labels an Einstein-notation equation names."),
        decl("tensordot", "(a: Tensor, b: Tensor, dims=2)", _contract.tensordot,
             "Contracts ``dims`` (a count, or two lists of dims) of ``a`` with those of ``b``."),
        decl("kron", "(input: Tensor, other: Tensor)", _kron, "The Kronecker product.", method=True),
        decl("cross", "(input: Tensor, other: Tensor, dim=None)", _cross,
             "The cross product along ``dim`` (default: the first dim of size 3, deprecated).", method=True),
        decl("cdist", "(x1: Tensor, x2: Tensor, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary')", _cdist,
             "The ``p``-norm distance between each pair of rows of ``x1`` and ``x2``, batched."),
        decl("trace", "(input: Tensor)", _trace, "The sum of a matrix's main diagonal.", method=True),
        decl("block_diag", "(tensors: TensorList)", _block_diag,
             "A block-diagonal matrix of the given (at most 2-D) tensors."),
        decl("cartesian_prod", "(tensors: TensorList)", _cartesian_prod,
             "The Cartesian product of 1-D tensors, one row per combination."),
        decl("combinations", "(input: Tensor, r=2, with_replacement=False)", _combinations,
             "The ``r``-length combinations of a 1-D tensor's elements, as rows."),
        decl("vander", "(x: Tensor, N=None, increasing=False)", _vander,
             "The Vandermonde matrix: columns are powers of ``x`` (decreasing unless ``increasing``)."),
        decl("renorm", "(input: Tensor, p, dim, maxnorm)", _renorm,
             "Each sub-tensor along ``dim`` whose ``p``-norm exceeds ``maxnorm`` is scaled down to it.",
             method=True, inplace=True),
        decl("diff", "(input: Tensor, n=1, dim=-1, prepend: Tensor? = None, append: Tensor? = None)", _diff,
             "The ``n``-th forward difference along ``dim``.", method=True),
        decl("cov", "(input: Tensor, *, correction=1, fweights: Tensor? = None, aweights: Tensor? = None)", _cov,
             "The covariance matrix of the variables in the rows of ``input``.", method=True),
        decl("corrcoef", "(input: Tensor)", _corrcoef,
             "Pearson's correlation coefficients of the variables in the rows of ``input``.", method=True),
    ]


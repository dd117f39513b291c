"""``flambeau.linalg`` functions written with other ops (so every backend and autograd get them for free).

matrix_norm, norm, pinv, matrix_rank, multi_dot, matrix_power, vecdot and eigvalsh: each is a
composite op whose gradient comes from the ops it is built from.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import type_name, wrap_dim
from ._linalg_checks import check_float, check_matrix, check_square, check_uplo, square_float
from .shape import result_of


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


# -- norms ------------------------------------------------------------------------------

_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                 dtype: Any = None) -> Tensor:
    op = "linalg.matrix_norm"
    check_matrix(op, A)
    check_float(op, A, low_precision=True)
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    if ord in ("nuc", 2, -2):  # from the singular values: no float16/bfloat16 SVD, as in PyTorch
        check_float(op, A)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = wrap_dim(dim[0], A._data.ndim), wrap_dim(dim[1], A._data.ndim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        A = A.to(dtype)
    vector_norm = _fn("linalg_vector_norm")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    absA = None if ord in ("nuc", 2, -2) else A.abs()
    if ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum (sum over rows, then the extreme over columns); inf: rows
        over, across = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = absA.sum(over, keepdim=True)
        best = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
        return best if keepdim else best.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    moved = A.movedim((d0, d1), (-2, -1))
    sv = _fn("linalg_svdvals")(moved)
    if ord == "nuc":
        out = sv.sum(-1)
    else:
        out = sv.amax(-1) if ord == 2 else sv.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def _norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    op = "linalg.norm"
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is None and ord is not None and A._data.ndim not in (1, 2):
        raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A._data.ndim}D.")
    if ord is None:
        return _fn("linalg_vector_norm")(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and A._data.ndim == 2):
        # a string order ('fro', 'nuc') always means a matrix norm, as in PyTorch
        return _fn("linalg_matrix_norm")(A, ord, tuple(dim) if dim is not None else (-2, -1), keepdim, dtype=dtype)
    return _fn("linalg_vector_norm")(A, ord, dim, keepdim, dtype=dtype)


def _vecdot(x: Tensor, y: Tensor, dim: int = -1) -> Tensor:
    op = "linalg.vecdot"
    check_float(op, x, low_precision=True)
    if x._dtype is not y._dtype:
        raise RuntimeError(f"{op}: Expected x and y to have the same dtype, but found x of type "
                           f"{type_name(x._dtype)} and y of type {type_name(y._dtype)} instead")
    return (x.conj() * y).sum(dim)


# -- pseudo-inverse and rank ------------------------------------------------------------------

def _tolerances(A: Tensor, S: Tensor, atol: Any, rtol: Any) -> Tensor:
    """PyTorch's threshold ``max(atol, rtol * S_max)``, with ``rtol = eps * max(m, n)`` by default."""
    real = A._dtype.to_real()
    if rtol is None:
        eps = 1.1920928955078125e-07 if real is _dtypes.float32 else 2.220446049250313e-16
        rtol = 0.0 if (atol is not None and (not isinstance(atol, (int, float)) or atol > 0)) else \
            eps * max(A._data.shape[-2:])
    smax = S.amax(-1, keepdim=True) if S._data.shape[-1] else S.sum(-1, keepdim=True)
    tol = smax * rtol
    if atol is not None:
        tol = _fn("maximum")(tol, atol) if isinstance(atol, Tensor) else tol.clamp(min=atol)
    return tol


def _pinv(A: Tensor, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    if A._data.ndim < 2 or A._dtype._category < _dtypes._FLOAT:
        raise RuntimeError(f"linalg.pinv({type_name(A._dtype)}{{{list(A._data.shape)}}}): expected a tensor with 2 "
                           "or more dimensions of float, double, cfloat or cdouble types")
    if hermitian:
        L, V = _fn("linalg_eigh")(A)
        tol = _tolerances(A, L.abs(), atol, rtol)
        keep = L.abs() > tol
        inv_l = _fn("where")(keep, 1 / _fn("where")(keep, L, 1.0), 0.0)
        return (V * inv_l.unsqueeze(-2).to(V.dtype)).matmul(V.mH)
    U, S, Vh = _fn("linalg_svd")(A, False)
    tol = _tolerances(A, S, atol, rtol)
    keep = S > tol
    inv_s = _fn("where")(keep, 1 / _fn("where")(keep, S, 1.0), 0.0)
    return (Vh.mH * inv_s.unsqueeze(-2).to(Vh.dtype)).matmul(U.mH)


def _matrix_rank(A: Tensor, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    op = "linalg.matrix_rank"
    check_matrix(op, A)
    check_float(op, A)
    S = _fn("linalg_eigvalsh")(A).abs() if hermitian else _fn("linalg_svdvals")(A)
    tol = _tolerances(A, S, atol, rtol)
    return (S > tol).sum(-1)


def _eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    square_float("linalg.eigvalsh", A)
    check_uplo(UPLO)
    return _fn("linalg_eigh")(A, UPLO)[0]


# -- products ----------------------------------------------------------------------------

def _multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    op = "multi_dot()"
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{op}: expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first._data.ndim not in (1, 2):
        raise RuntimeError(f"{op}: the first tensor must be 1D or 2D but got {first._data.ndim}D")
    if last._data.ndim not in (1, 2):
        raise RuntimeError(f"{op}: the last tensor must be 1D or 2D but got {last._data.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t._data.ndim != 2:
            raise RuntimeError(f"{op}: tensor {i} must be 2D but got {t._data.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t._dtype is not first._dtype:
            raise RuntimeError(f"{op}: all tensors must have be the same dtype but tensor 0 is "
                               f"{_short(first._dtype)} and tensor {i} {_short(t._dtype)}")
    mats = [first.unsqueeze(0) if first._data.ndim == 1 else first, *tensors[1:-1],
            last.unsqueeze(1) if last._data.ndim == 1 else last]
    for i in range(n - 1):
        a, b = mats[i]._data.shape, mats[i + 1]._data.shape
        if a[1] != b[0]:
            raise RuntimeError(f"{op}: tensors {i} and {i + 1} with shapes [{a[0]}, {a[1]}] and [{b[0]}, {b[1]}] "
                               "cannot be multiplied")
    result = _chain(mats, _order([m._data.shape[0] for m in mats] + [mats[-1]._data.shape[1]]), 0, n - 1)
    if first._data.ndim == 1:
        result = result.squeeze(0)
    if last._data.ndim == 1:
        result = result.squeeze(-1)
    return result


def _short(d: _dtypes.dtype) -> str:
    return {"float32": "float", "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>", "int64": "long int"}.get(d.name, d.name)


def _order(p: list[int]) -> list[list[int]]:
    """The matrix-chain split points minimising scalar multiplications (the classic O(n^3) table)."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k).mm(_chain(mats, split, k + 1, j))


def _matrix_power(input: Tensor, n: int) -> Tensor:
    op = "linalg.matrix_power"
    check_square(op, input)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        size = input._data.shape[-1]
        eye = _fn("eye")(size, dtype=input._dtype, device=input.device)
        return eye.expand(input._data.shape).clone()
    A = input
    if n < 0:
        A = _fn("linalg_inv")(input)
        n = -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else result.matmul(A)
        n >>= 1
        if n:
            A = A.matmul(A)
    return result if result is not input else input.clone()


def declarations() -> list[OpDecl]:
    def decl(name: str, sig: str, fn: Any, doc: str, **kw: Any) -> OpDecl:
        return OpDecl(name, sig, result_of(fn), composite=fn, method=False, export=False, doc=doc, **kw)

    return [
        decl("linalg_matrix_norm", "(A: Tensor, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None)",
             _matrix_norm, "The matrix norm ``ord`` ('fro', 'nuc', inf, -inf, 1, -1, 2, -2) over ``dim``."),
        decl("linalg_norm", "(A: Tensor, ord=None, dim=None, keepdim=False, *, dtype=None)", _norm,
             "A vector or matrix norm, by ``ord`` and ``dim``."),
        decl("linalg_vecdot", "(x: Tensor, y: Tensor, *, dim=-1)", _vecdot,
             "The dot product ``sum(conj(x) * y)`` along ``dim``, broadcasting the rest."),
        decl("linalg_pinv", "(A: Tensor, *, atol=None, rtol=None, hermitian=False)", _pinv,
             "The Moore-Penrose pseudo-inverse (from the SVD, or the eigendecomposition when hermitian)."),
        decl("linalg_matrix_rank", "(A: Tensor, *, atol=None, rtol=None, hermitian=False)", _matrix_rank,
             "The number of singular values above ``max(atol, rtol * largest)``.", differentiable=False),
        decl("linalg_eigvalsh", "(A: Tensor, UPLO='L')", _eigvalsh, "The eigenvalues of a Hermitian matrix."),
        decl("linalg_multi_dot", "(tensors: TensorList)", _multi_dot,
             "The product of a chain of matrices, multiplied in the cheapest order."),
        OpDecl("matrix_power", "(input: Tensor, n)", result_of(_matrix_power), composite=_matrix_power,
               doc="The matrix raised to the integer power ``n`` (``n < 0``: of the inverse)."),
    ]

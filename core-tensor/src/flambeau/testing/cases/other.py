"""Cases for einsum, tensordot, kron, cross, cdist, trace, block_diag, cartesian_prod, combinations,
vander, renorm, diff, cov and corrcoef."""

from __future__ import annotations

import itertools

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import excluding, promoted, same

NUMERIC = excluding(P.ALL, "bool")
REAL_FLOATS = ("float32", "float64")
WIDE = {"bfloat16": (3e-2, 1e-1), "float16": (4e-3, 2e-2)}


def _a(shape, dtype, layout="contiguous", **kw):
    return Arg(shape, dtype, layout, **kw)


def _s(shape, dtype, layout="contiguous"):
    return Arg(shape, dtype, layout, low=-2, high=2)


def _f(shape, dtype="float32"):
    return Arg(shape, dtype)


def _errors(*items):
    return lambda: list(items)


def _integral_to_long(sample: Sample) -> str:
    d = same(sample)
    return "int64" if P.category(d) <= 1 else d


def _listed(sample: Sample) -> str:
    """The dtype of the first tensor in the sample's tensor list."""
    return next(a for a in sample.args if isinstance(a, list))[0].dtype


# -- einsum, tensordot ---------------------------------------------------------------------

_EQUATIONS = [
    ("ij,jk->ik", [((3, 4), "contiguous"), ((4, 5), "transposed")]),
    ("bij,bjk->bik", [((2, 3, 4), "sliced"), ((2, 4, 2), "contiguous")]),
    ("ii->i", [((3, 3), "transposed")]),
    ("ij->", [((3, 4), "contiguous")]),
    ("i,j", [((3,), "sliced"), ((2,), "contiguous")]),
    ("...ij,...jk->...ik", [((2, 1, 2, 3), "contiguous"), ((5, 3, 2), "contiguous")]),
    ("ij,ij->ij", [((1, 3), "contiguous"), ((2, 3), "contiguous")]),
    ("ijk,kj,ji->", [((2, 3, 4), "contiguous"), ((4, 3), "contiguous"), ((3, 2), "transposed")]),
    ("bn,anm,bm->ba", [((2, 3), "contiguous"), ((4, 3, 5), "contiguous"), ((2, 5), "contiguous")]),
]


def _einsum_samples(dtype: str) -> list[Sample]:
    return [Sample((eq, [_s(shape, dtype, layout) for shape, layout in ops])) for eq, ops in _EQUATIONS]


def _einsum_ref(equation, operands):
    return np.asarray(np.einsum(equation, *operands))


def _tensordot_samples(dtype: str) -> list[Sample]:
    return [
        Sample((_s((3, 4, 5), dtype), _s((4, 5, 2), dtype))),
        Sample((_s((3, 4), dtype, "transposed"), _s((3, 2), dtype)), {"dims": ([0], [0])}),
        Sample((_s((2, 3), dtype), _s((4,), dtype, "sliced")), {"dims": 0}),
        Sample((_s((2, 3, 4), dtype), _s((4, 3), dtype)), {"dims": [[1, 2], [1, 0]]}),
    ]


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, dims)


# -- products and geometry ---------------------------------------------------------------------

def _kron_samples(dtype: str) -> list[Sample]:
    out = [Sample((_s((2, 3), dtype), _s((3, 2), dtype, "transposed"))),
           Sample((_s((3,), dtype, "sliced"), _s((2, 2), dtype))),
           Sample((_s((), dtype), _s((2,), dtype))),
           Sample((_s((0, 2), dtype), _s((2, 1), dtype)))]
    if dtype == "float32":
        out.append(Sample((_f((2,)), Arg((3,), "int64"))))
    return out


def _cross_samples(dtype: str) -> list[Sample]:
    return [Sample((_s((4, 3), dtype), _s((4, 3), dtype, "sliced")), {"dim": 1}),
            Sample((_s((3, 2), dtype, "transposed"), _s((3, 2), dtype)), {"dim": 0}),
            Sample((_s((1, 3), dtype), _s((4, 3), dtype)), {"dim": -1})]


def _cross_ref(a, b, dim=None):
    return np.cross(a, b, axis=dim)


def _cdist_samples(dtype: str) -> list[Sample]:
    return [Sample((_f((3, 4), dtype), _f((5, 4), dtype, ))),
            Sample((_a((4, 3), dtype, "transposed"), _f((2, 3), dtype)), {"p": 1.0}),
            Sample((_f((2, 3, 2), dtype), _f((1, 4, 2), dtype)), {"p": float("inf")}),
            Sample((_f((3, 2), dtype), _f((2, 2), dtype)), {"p": 0.0}),
            Sample((_f((30, 3), dtype), _f((4, 3), dtype)), {"p": 2.0}),
            Sample((_f((3, 3), dtype), _f((4, 3), dtype)), {"p": 3.0, "compute_mode": "donot_use_mm_for_euclid_dist"})]


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(d.dtype)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


def _trace_ref(x):
    return np.asarray(np.trace(x, dtype=np.int64 if x.dtype.kind in "iub" else None))


# -- building tensors ----------------------------------------------------------------------------

def _block_diag_ref(tensors):
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    dtype = np.result_type(*blocks)
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _block_diag_samples(dtype: str) -> list[Sample]:
    return [Sample(([_a((2, 3), dtype), _a((3,), dtype, "sliced"), _a((), dtype), _a((2, 2), dtype, "transposed")],)),
            Sample(([_a((0, 2), dtype), _a((1, 0), dtype)],))]


def _cartesian_ref(tensors):
    rows = list(itertools.product(*[t.tolist() for t in tensors]))
    dtype = tensors[0].dtype
    if len(tensors) == 1:
        return tensors[0].copy()
    return np.array(rows, dtype).reshape(-1, len(tensors))


def _cartesian_samples(dtype: str) -> list[Sample]:
    return [Sample(([_a((2,), dtype), _a((3,), dtype, "sliced")],)),
            Sample(([_a((2,), dtype), _a((0,), dtype), _a((2,), dtype)],)),
            Sample(([_a((3,), dtype)],))]


def _combinations_ref(x, r=2, with_replacement=False):
    if r == 0:
        return np.zeros((0,), x.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(x.tolist(), r))
    return np.array(rows, x.dtype).reshape(-1, r)


def _combinations_samples(dtype: str) -> list[Sample]:
    return [Sample((_a((4,), dtype),)), Sample((_a((4,), dtype, "sliced"), 3)),
            Sample((_a((3,), dtype),), {"r": 2, "with_replacement": True}),
            Sample((_a((2,), dtype), 3)), Sample((_a((3,), dtype), 0))]


def _vander_ref(x, N=None, increasing=False):
    if x.dtype.kind in "iub":
        x = x.astype(np.int64)
    return np.vander(x, N, increasing)


def _vander_samples(dtype: str) -> list[Sample]:
    return [Sample((_s((4,), dtype),)), Sample((_s((3,), dtype, "sliced"), 5)),
            Sample((_s((3,), dtype),), {"N": 2, "increasing": True}), Sample((_s((3,), dtype), 0))]


# -- renorm, diff, cov -------------------------------------------------------------------------

def _renorm_ref(x, p, dim, maxnorm):
    moved = np.moveaxis(x, dim, 0)
    flat = np.abs(moved.reshape(moved.shape[0], -1))
    norms = flat.max(1) if np.isinf(p) else (flat ** p).sum(1) ** (1 / p)
    scale = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return np.moveaxis(moved * scale.reshape((-1,) + (1,) * (moved.ndim - 1)), 0, dim)


def _renorm_samples(dtype: str) -> list[Sample]:
    return [Sample((_f((3, 4), dtype), 2, 0, 2.0)), Sample((_a((3, 4), dtype, "transposed"), 1, 1, 3.0)),
            Sample((_f((2, 3, 4), dtype), float("inf"), -1, 1.0)), Sample((_f((2, 3), dtype), 3, 0, 100.0))]


def _diff_ref(x, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, dim, **kw)


def _diff_samples(dtype: str) -> list[Sample]:
    return [Sample((_s((5,), dtype),)), Sample((_s((3, 4), dtype, "transposed"), 2, 0)),
            Sample((_s((2, 3), dtype),), {"prepend": _s((2, 1), dtype), "append": _s((2, 2), dtype)}),
            Sample((_s((3,), dtype), 4)), Sample((_s((2, 4), dtype, "sliced"), 0))]


def _cov_ref(x, correction=1, fweights=None, aweights=None):
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    return np.asarray(np.cov(x, ddof=correction, fweights=fweights, aweights=aweights))


def _cov_samples(dtype: str) -> list[Sample]:
    out = [Sample((_f((3, 6), dtype),)), Sample((_a((4, 3), dtype, "transposed"),), {"correction": 0}),
           Sample((_f((5,), dtype),))]
    if P.category(dtype) >= 2:
        out.append(Sample((_f((2, 5), dtype),), {"correction": 2,
                                                 "fweights": Arg((5,), "int64", low=0, high=4),
                                                 "aweights": Arg((5,), "float32" if dtype == "float32" else "float64",
                                                                 low=0.1, high=2)}))
    return out


def _cov_dtype(sample: Sample) -> str:
    d = same(sample)
    return d if P.category(d) >= 2 else "float32"


def _corrcoef_ref(x):
    return np.asarray(np.corrcoef(x))


def cases() -> list[OpCase]:
    def case(op, dtypes, samples, ref, result, *errors, **kw):
        return OpCase(op, dtypes, samples, ref, result, errors=_errors(*errors), **kw)

    return [
        case("einsum", NUMERIC, _einsum_samples, _einsum_ref, _listed,
             ErrorCase(("ij,jk", [_f((2, 3)), _f((4, 5))]), RuntimeError,
                       "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen "
                       "size 3"),
             ErrorCase(("ij,jk->ik", [_f((2, 3))]), RuntimeError,
                       "einsum(): fewer operands were provided than specified in the equation"),
             ErrorCase(("ijk,jk->ik", [_f((2, 3)), _f((3, 4))]), RuntimeError,
                       "einsum(): the number of subscripts in the equation (3) does not match the number of "
                       "dimensions (2) for operand 0 and no ellipsis was given"),
             ErrorCase(("ij,jk->il", [_f((2, 3)), _f((3, 4))]), RuntimeError,
                       "einsum(): output subscript l does not appear in the equation for any input operand"),
             ErrorCase(("i1,jk->ik", [_f((2, 3)), _f((3, 4))]), RuntimeError,
                       "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in "
                       "[a-zA-Z]"),
             ErrorCase(("ij,jk->ik", [_f((2, 3)), _f((3, 4), "float64")]), RuntimeError,
                       "expected scalar type Float but found Double"),
             tolerances=WIDE),
        case("tensordot", NUMERIC, _tensordot_samples, _tensordot_ref, same,
             ErrorCase((_f((2, 3)), _f((4, 5))), RuntimeError,
                       "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 "
                       "in dim 0", {"dims": 1}),
             ErrorCase((_f((2, 3)), _f((3, 5))), RuntimeError, "tensordot expects dims >= 0, but got dims=-1",
                       {"dims": -1}),
             ErrorCase((_f((2, 3)), _f((3, 5))), RuntimeError, "both dimension lists should have same length",
                       {"dims": ([1], [0, 1])}),
             ErrorCase((_f((2, 3)), _f((3, 5), "float64")), RuntimeError, "both inputs should have same dtype",
                       {"dims": 1}),
             tolerances=WIDE),
        case("kron", P.ALL, _kron_samples, np.kron, promoted),
        case("cross", NUMERIC, _cross_samples, _cross_ref, same,
             ErrorCase((_f((2, 3)), _f((3,))), RuntimeError,
                       "linalg.cross: inputs must have the same number of dimensions.", {"dim": 1}),
             ErrorCase((_f((4, 2)), _f((4, 2))), RuntimeError, "no dimension of size 3 in input"),
             ErrorCase((_f((2, 3)), _f((2, 3))), RuntimeError, "inputs dimension 0 must have length 3. Got 2 and 2",
                       {"dim": 0}),
             tolerances=WIDE),
        case("cdist", REAL_FLOATS, _cdist_samples, _cdist_ref, same,
             ErrorCase((_f((2, 3)), _f((4, 4))), RuntimeError,
                       "X1 and X2 must have the same number of columns. X1: 3 X2: 4"),
             ErrorCase((_f((3,)), _f((4, 3))), RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D"),
             ErrorCase((_f((2, 3)), _f((4, 3))), RuntimeError, "cdist only supports non-negative p values",
                       {"p": -1.0}),
             ErrorCase((Arg((2, 3), "int64"), Arg((2, 3), "int64")), RuntimeError,
                       "cdist only supports floating-point dtypes, X1 got: Long"),
             ErrorCase((_f((2, 3)), _f((4, 3))), ValueError, "foo is not a valid value for compute_mode",
                       {"compute_mode": "foo"}),
             tolerances={"float32": (1e-4, 1e-4)}),
        case("trace", NUMERIC, lambda d: [Sample((_s((3, 3), d),)), Sample((_s((2, 4), d, "transposed"),)),
                                          Sample((_s((0, 2), d),))], _trace_ref, _integral_to_long,
             ErrorCase((_f((2, 3, 4)),), RuntimeError, "trace: expected a matrix, but got tensor with dim 3"),
             ErrorCase((Arg((2, 2), "bool"),), NotImplementedError, "\"trace\" not implemented for 'Bool'"),
             tolerances=WIDE),
        case("block_diag", P.ALL, _block_diag_samples, _block_diag_ref, _listed,
             ErrorCase(([_f((2, 3)), _f((2, 2, 2))],), RuntimeError,
                       "flambeau.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions")),
        case("cartesian_prod", P.ALL, _cartesian_samples, _cartesian_ref, _listed,
             ErrorCase(([_f((2, 2))],), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"),
             ErrorCase(([_f((2,)), Arg((3,), "int64")],), RuntimeError,
                       "meshgrid expects all tensors to have the same dtype")),
        case("combinations", P.ALL, _combinations_samples, _combinations_ref, same,
             ErrorCase((_f((2, 2)),), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"),
             ErrorCase((_f((4,)), -1), RuntimeError, "Expect a non-negative number, but got -1")),
        case("vander", excluding(P.ALL, "float16", "bfloat16"), _vander_samples, _vander_ref, _integral_to_long,
             ErrorCase((_f((2, 3)),), RuntimeError, "x must be a one-dimensional tensor."),
             ErrorCase((_f((3,)), -1), RuntimeError, "N must be non-negative.")),
        case("renorm", REAL_FLOATS, _renorm_samples, _renorm_ref, same,
             ErrorCase((_f((2, 3)), -1, 0, 1.0), RuntimeError, "renorm: non-positive-norm not supported"),
             ErrorCase((_f((2, 3)), 2, 0, -1.0), RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1"),
             ErrorCase((_f((3,)), 2, 0, 1.0), RuntimeError,
                       "renorm: input needs at least 2 dimensions, got 1 dimensions"),
             ErrorCase((_f((2, 3)), 2, 2, 1.0), IndexError, "Dimension out of range")),
        case("diff", P.ALL, _diff_samples, _diff_ref, same,
             ErrorCase((_f(()),), RuntimeError, "diff expects input to be at least one-dimensional"),
             ErrorCase((_f((3,)), -1), RuntimeError, "order must be non-negative but got -1"),
             ErrorCase((_f((3,)),), RuntimeError, "diff expects prepend or append to be the same dimension as input",
                       {"prepend": _f((2, 2))}),
             tolerances=WIDE),
        case("cov", ("float32", "float64", "complex128", "int64"), _cov_samples, _cov_ref, _cov_dtype,
             ErrorCase((_f((2, 3, 4)),), RuntimeError,
                       "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions"),
             ErrorCase((_f((2, 3)),), RuntimeError,
                       "cov(): expected fweights to have integral dtype but got fweights with Float dtype",
                       {"fweights": _f((3,))}),
             ErrorCase((_f((2, 3)),), RuntimeError,
                       "cov(): expected fweights to have the same numel as there are observations in the input but "
                       "got 2 != 3", {"fweights": Arg((2,), "int64", low=0, high=3)}),
             ErrorCase((_f((2, 3)),), RuntimeError, "cov(): aweights cannot be negative",
                       {"aweights": Arg((3,), "float32", values=[1.0, -1.0, 1.0])}, data_dependent=True),
             tolerances={"float32": (1e-4, 1e-5)}),
        case("corrcoef", ("float32", "float64"), lambda d: [Sample((_f((3, 6), d),)),
                                                             Sample((_a((4, 3), d, "transposed"),))],
             _corrcoef_ref, same,
             ErrorCase((_f((2, 3, 4)),), RuntimeError,
                       "corrcoef(): expected input to have two or fewer dimensions but got an input with 3 dimensions"),
             tolerances={"float32": (1e-4, 1e-5)}),
    ]


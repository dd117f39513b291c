"""Cases for comparisons and ordering: equal, allclose, isclose, isposinf/isneginf, isreal,
fmax/fmin, sort/argsort/msort, topk, kthvalue, searchsorted, bucketize."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import UNARY_SHAPES, binary, const, excluding, promoted, same, with_wide_zero_dim, zero_dim_common

_SPECIALS = [[1.0, math.inf, -math.inf, math.nan], [0.0, -0.0, 2.5, -math.inf]]


def _with_specials(samples):
    def more(dtype: str) -> list[Sample]:
        out = list(samples(dtype))
        if P.category(dtype) >= 2:
            out.append(Sample((Arg((2, 4), dtype, values=_SPECIALS),), note="inf/nan"))
        return out
    return more


def _unary(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout),)) for shape, layout in UNARY_SHAPES]


# -- equal / allclose / isclose --------------------------------------------------------

def _pair_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((3, 4), dtype, low=-2, high=2), Arg((3, 4), dtype, "transposed", low=-2, high=2))),
        Sample((Arg((3,), dtype, values=[1, 0, 1]), Arg((3,), dtype, values=[1, 0, 1])), note="equal"),
        Sample((Arg((0, 2), dtype), Arg((0, 2), dtype))),
    ]
    if P.category(dtype) >= 2:
        out.append(Sample((Arg((4,), dtype, values=[1.0, math.nan, math.inf, 2.0]),
                           Arg((4,), dtype, values=[1.0 + 1e-9, math.nan, math.inf, 2.0])), note="NaN"))
    return out


def _equal_samples(dtype: str) -> list[Sample]:
    return _pair_samples(dtype) + [Sample((Arg((2,), dtype), Arg((3,), dtype)), note="sizes differ")]


def _equal_ref(x, y):
    return np.asarray(x.shape == y.shape and bool(np.array_equal(x, y)))


def _close_samples(dtype: str) -> list[Sample]:
    out = _pair_samples(dtype)
    out.append(Sample((Arg((3, 4), dtype, low=-2, high=2), Arg((4,), dtype, low=-2, high=2)), note="broadcast"))
    if P.category(dtype) >= 2:
        nan = Arg((4,), dtype, values=[1.0, math.nan, math.inf, 2.0])
        out.append(Sample((nan, nan), {"equal_nan": True}))
        out.append(Sample((Arg((3,), dtype, values=[1.0, 2.0, 3.0]), Arg((3,), dtype, values=[1.05, 2.5, 2.0])),
                          {"rtol": 0.1, "atol": 0.0}))
    return out


def _isclose_ref(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    if x.dtype.kind in "biu":
        x, y = x.astype(np.float64), y.astype(np.float64)
    return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _close_errors(name: str):
    def errors():
        yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float64")), RuntimeError, "Float did not match Double")
        yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float32"), -1.0), RuntimeError,
                        "rtol must be greater than or equal to zero, but got -1.0")
        yield ErrorCase((Arg((3,), "float32"), Arg((2,), "float32")), RuntimeError,
                        "The size of tensor a (3) must match the size of tensor b (2)")
    return errors


def _isinf_ref(sign: int):
    def ref(x):
        if x.dtype.kind not in "fc":
            return np.zeros(x.shape, bool)
        return np.isinf(x) & ((x > 0) if sign > 0 else (x < 0))
    return ref


def _isreal_ref(x):
    return np.imag(x) == 0 if x.dtype.kind == "c" else np.ones(x.shape, bool)


def _fminmax_samples(dtype: str) -> list[Sample]:
    out = list(binary(scalars=(), mixed=("float64", "int32"))(dtype))
    if P.category(dtype) == 2:
        out.append(Sample((Arg((4,), dtype, values=[1.0, math.nan, math.nan, -math.inf]),
                           Arg((4,), dtype, values=[math.nan, 2.0, math.nan, 0.0])), note="NaN"))
    return out


# -- sort, topk, kthvalue ----------------------------------------------------------------

def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable order; descending lists equal elements in input order, NaN first."""
    n = x.shape[axis]
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    return (n - 1) - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _sort_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((), dtype),)),
        Sample((Arg((0, 3), dtype),)),
        Sample((Arg((7,), dtype, "sliced"),)),
        Sample((Arg((3, 4), dtype, "transposed"), 0)),
        Sample((Arg((3, 4), dtype, low=-2, high=2), 1, True), note="ties, descending"),
        Sample((Arg((2, 3, 4), dtype, low=-2, high=2), -2), {"stable": True}),
        Sample((Arg((2, 40), dtype, low=-9, high=9), -1, True), {"stable": True}),
    ]
    if P.category(dtype) == 2:
        out.append(Sample((Arg((2, 4), dtype, values=_SPECIALS), 1), note="NaN"))
        out.append(Sample((Arg((2, 4), dtype, values=_SPECIALS), 1, True), note="NaN descending"))
    return out


def _sort_ref(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = _order(x, dim, descending)
    return np.take_along_axis(x, order, axis=dim), order


def _argsort_ref(x, dim=-1, descending=False, stable=False):
    return _sort_ref(x, dim, descending, stable)[1]


def _msort_ref(x):
    return x.copy() if x.ndim == 0 else np.sort(x, axis=0, kind="stable")


def _topk_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((), dtype), 1)),
        Sample((Arg((7,), dtype, "sliced"), 3)),
        Sample((Arg((3, 4), dtype, "transposed"), 2, 0)),
        Sample((Arg((3, 5), dtype, low=-2, high=2), 2, 1, False), note="smallest, ties"),
        Sample((Arg((2, 3, 4), dtype), 4), {"sorted": True}),
        Sample((Arg((3, 4), dtype), 0)),
    ]
    if P.category(dtype) == 2:
        out.append(Sample((Arg((2, 4), dtype, values=_SPECIALS), 2), note="NaN"))
    return out


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = np.take(_order(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, order, axis=dim), order


def _kthvalue_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((), dtype), 1)),
        Sample((Arg((7,), dtype, "sliced"), 3)),
        Sample((Arg((3, 4), dtype, "transposed"), 2, 0)),
        Sample((Arg((3, 5), dtype, low=-2, high=2), 5, 1, True), note="ties"),
        Sample((Arg((2, 3, 4), dtype), 1), {"keepdim": True}),
    ]
    if P.category(dtype) == 2:
        out.append(Sample((Arg((2, 4), dtype, values=_SPECIALS), 3), note="NaN"))
    return out


def _kthvalue_ref(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    index = np.take(_order(x, dim, False), [k - 1], axis=dim)
    values = np.take_along_axis(x, index, axis=dim)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index


def _sort_errors():
    yield ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")


def _topk_errors():
    yield ErrorCase((Arg((3,), "float32"), 4), RuntimeError, "selected index k out of range")
    yield ErrorCase((Arg((2, 3), "float32"), 1, 2), IndexError, "Dimension out of range")


def _kthvalue_errors():
    yield ErrorCase((Arg((3,), "float32"), 4), RuntimeError,
                    "kthvalue(): selected number k out of range for dimension 0")
    yield ErrorCase((Arg((3, 2), "float32"), 0), RuntimeError,
                    "kthvalue(): selected number k out of range for dimension 1")


# -- searchsorted, bucketize ---------------------------------------------------------

def _sorted_arg(shape, dtype: str) -> Arg:
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    n = shape[-1]
    values = np.sort(np.random.default_rng(n).integers(-4, 5, size=(rows, n)), axis=-1).reshape(shape)
    return Arg(shape, dtype, values=values)


def _search_samples(dtype: str) -> list[Sample]:
    return [
        Sample((_sorted_arg((6,), dtype), Arg((3, 4), dtype, "transposed"))),
        Sample((_sorted_arg((6,), dtype), Arg((5,), dtype, low=-4, high=4)), {"right": True}),
        Sample((_sorted_arg((2, 5), dtype), Arg((2, 3), dtype)), {"side": "right", "out_int32": True}),
        Sample((_sorted_arg((6,), dtype), 1)),
        Sample((Arg((4,), dtype, values=[3, -1, 2, 0]), Arg((3,), dtype)),
               {"sorter": Arg((4,), "int64", values=[1, 3, 2, 0])}),
    ]


def _searchsorted_ref(seq, values, out_int32=False, right=False, side=None, sorter=None):
    which = "right" if right or side == "right" else "left"
    if seq.ndim == 1:
        return np.asarray(np.searchsorted(seq, values, side=which, sorter=sorter))
    return np.stack([np.searchsorted(s, v, side=which) for s, v in zip(seq, values)])


def _search_dtype(sample: Sample) -> str:
    return "int32" if sample.kwargs.get("out_int32") else "int64"


def _search_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((2,), "float32")), RuntimeError,
                    "side and right can't be set to opposites", kwargs={"side": "left", "right": True})
    yield ErrorCase((Arg((2, 3), "float32"), Arg((3, 2), "float32")), RuntimeError,
                    "boundaries tensor should be 1 dimension or the first N-1 dimensions")


def _bucketize_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype, "transposed"), _sorted_arg((6,), dtype))),
        Sample((Arg((5,), dtype, "sliced", low=-4, high=4), _sorted_arg((6,), dtype)), {"right": True}),
        Sample((2, _sorted_arg((6,), dtype)), {"out_int32": True}),
    ]


def _bucketize_ref(x, boundaries, out_int32=False, right=False):
    return np.asarray(np.searchsorted(boundaries, x, side="right" if right else "left"))


def _bucketize_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((2, 2), "float32")), RuntimeError,
                    "boundaries tensor must be 1 dimension, but got dim(2)")


def cases() -> list[OpCase]:
    real_nonbool = excluding(P.REAL, "bool")
    return [
        OpCase("equal", P.ALL, _equal_samples, _equal_ref, const("bool")),
        OpCase("allclose", P.REAL, _close_samples, lambda *a, **k: np.all(_isclose_ref(*a, **k)), const("bool"),
               errors=_close_errors("allclose")),
        OpCase("isclose", P.ALL, _close_samples, _isclose_ref, const("bool"), errors=_close_errors("isclose")),
        OpCase("isposinf", P.REAL, _with_specials(_unary), _isinf_ref(1), const("bool"),
               errors=lambda: [ErrorCase((Arg((2,), "complex64"),), RuntimeError,
                                         "isposinf does not support complex inputs.")]),
        OpCase("isneginf", P.REAL, _with_specials(_unary), _isinf_ref(-1), const("bool")),
        OpCase("isreal", P.ALL, _unary, _isreal_ref, const("bool")),
        OpCase("fmax", P.REAL, with_wide_zero_dim(_fminmax_samples), zero_dim_common(np.fmax), promoted,
               errors=lambda: [ErrorCase((Arg((2,), "complex64"), Arg((2,), "complex64")), RuntimeError,
                                         "fmax not implemented for complex tensors.")]),
        OpCase("fmin", P.REAL, with_wide_zero_dim(_fminmax_samples), zero_dim_common(np.fmin), promoted),
        OpCase("sort", P.REAL, _sort_samples, _sort_ref, lambda s: (same(s), "int64"), errors=_sort_errors),
        OpCase("argsort", P.REAL, _sort_samples, _argsort_ref, const("int64"), errors=_sort_errors),
        OpCase("msort", P.REAL, _unary, _msort_ref, same),
        OpCase("topk", real_nonbool, _topk_samples, _topk_ref, lambda s: (same(s), "int64"), errors=_topk_errors),
        OpCase("kthvalue", real_nonbool, _kthvalue_samples, _kthvalue_ref, lambda s: (same(s), "int64"),
               errors=_kthvalue_errors),
        OpCase("searchsorted", real_nonbool, _search_samples, _searchsorted_ref, _search_dtype,
               errors=_search_errors),
        OpCase("bucketize", real_nonbool, _bucketize_samples, _bucketize_ref, _search_dtype,
               errors=_bucketize_errors),
    ]

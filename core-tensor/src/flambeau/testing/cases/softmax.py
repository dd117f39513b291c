"""Cases for softmax, log_softmax and their backward ops."""
from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same

_LOOSE = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}

#: (shape, layout, dim): the last dim (the fused kernels' case), other dims, strided views, empty and 0-d.
_SHAPES = [((4, 33), "contiguous", 1), ((4, 33), "contiguous", 0), ((3, 5), "transposed", 1),
           ((3, 6), "sliced", -1), ((2, 3, 4), "contiguous", 1), ((7,), "contiguous", 0), ((), "contiguous", 0),
           ((2, 0), "contiguous", 1), ((0, 3), "contiguous", 1), ((2, 1000), "contiguous", -1)]


def _forward_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg(shape, dtype, layout, low=-8, high=8), dim)) for shape, layout, dim in _SHAPES]
    out.append(Sample((Arg((3, 2), dtype, values=[[0.0, -math.inf], [-math.inf, -math.inf], [1e4, 1e4 + 1]]), 1),
                      note="infinities and large values"))
    if dtype == "float32":
        out.append(Sample((Arg((3, 4), dtype), 1), {"dtype": None}))
    return out


def _axis(x: np.ndarray, dim: int) -> int | None:
    return None if x.ndim == 0 else dim % x.ndim


def _log_softmax_ref(x, dim, dtype=None):
    x = x.astype(np.float64)
    axis = _axis(x, dim)
    if x.size == 0:
        return x
    with np.errstate(all="ignore"):
        shifted = x - np.amax(x, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax_ref(x, dim, dtype=None):
    with np.errstate(all="ignore"):
        return np.exp(_log_softmax_ref(x, dim))


def _forward_errors():
    yield ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")
    yield ErrorCase((Arg((2, 3), "int64"), 1), RuntimeError, "not implemented for 'Long'")


def _backward_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout), Arg(shape, dtype, low=-3, high=0), dim))
            for shape, layout, dim in _SHAPES if layout != "transposed"]


def _softmax_backward_ref(g, y, dim):
    axis = _axis(y, dim)
    if y.size == 0:
        return y
    return y * (g - np.sum(g * y, axis=axis, keepdims=True))


def _log_softmax_backward_ref(g, y, dim):
    axis = _axis(y, dim)
    if y.size == 0:
        return y
    return g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)


def _backward_errors():
    yield ErrorCase((Arg((2, 3), "float32"), Arg((3, 2), "float32"), 1), RuntimeError, "does not match")
    yield ErrorCase((Arg((2, 3), "float32"), Arg((2, 3), "float64"), 1), RuntimeError, "same dtype")


def cases() -> list[OpCase]:
    return [
        OpCase("softmax", P.FLOATS, _forward_samples, _softmax_ref, same, errors=_forward_errors,
               tolerances=_LOOSE),
        OpCase("log_softmax", P.FLOATS, _forward_samples, _log_softmax_ref, same, errors=_forward_errors,
               tolerances=_LOOSE),
        OpCase("_softmax_backward_data", P.FLOATS, _backward_samples, _softmax_backward_ref, same,
               errors=_backward_errors, tolerances=_LOOSE),
        OpCase("_log_softmax_backward_data", P.FLOATS, _backward_samples, _log_softmax_backward_ref, same,
               errors=_backward_errors, tolerances=_LOOSE),
    ]

"""Conformance cases of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops.

The numpy references loop over output positions and windows, as the definitions read (they are
also the references of ``nn/tests/test_pooling.py``).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
#: PyTorch's max pooling takes every integer dtype but bool; its average pooling takes int64 (whose
#: result ``ref_avg_pool`` truncates toward zero, as PyTorch's division does, when storing it).
_MAX_DTYPES = _FLOATS + ("uint8", "int8", "int16", "int32", "int64")
_AVG_DTYPES = _FLOATS + ("int64",)
_LOOSE = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1), "float32": (1e-5, 1e-6)}


# -- references ----------------------------------------------------------------------------------------

def ref_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's documented output size, ``floor`` (``ceil`` with ceil_mode) of
    ``(size + 2p - d(k - 1) - 1) / s + 1``, a last window starting in the right padding dropped."""
    rounded = (math.ceil if ceil_mode else math.floor)((size + 2 * p - d * (k - 1) - 1) / s + 1)
    if ceil_mode and rounded > 0 and (rounded - 1) * s - p >= size:
        rounded -= 1
    return rounded


def _planes(x: np.ndarray):
    n, c = x.shape[:2]
    return [(i, j) for i in range(n) for j in range(c)]


def ref_max_pool(x, kernel_size, stride, padding, dilation, ceil_mode=False):
    """Values and flat indices; NaN wins (the last one), else the first maximum."""
    spatial = x.shape[2:]
    out = tuple(ref_out_size(*a, ceil_mode) for a in zip(spatial, kernel_size, stride, padding, dilation))
    values = np.empty(x.shape[:2] + out, dtype=x.dtype)
    indices = np.empty(x.shape[:2] + out, dtype=np.int64)
    for n, c in _planes(x):
        plane = x[n, c]
        for o in itertools.product(*(range(v) for v in out)):
            best, best_i = -np.inf, None
            for j in itertools.product(*(range(v) for v in kernel_size)):
                pos = tuple(o[d] * stride[d] - padding[d] + j[d] * dilation[d] for d in range(len(o)))
                if any(q < 0 or q >= spatial[d] for d, q in enumerate(pos)):
                    continue
                v = plane[pos]
                if best_i is None:
                    best_i = pos
                if v > best or np.isnan(v):
                    best, best_i = v, pos
            values[(n, c) + o] = best
            indices[(n, c) + o] = np.ravel_multi_index(best_i, spatial)
    return values, indices


def ref_avg_pool(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True, divisor_override=None):
    spatial = x.shape[2:]
    k = len(spatial)
    out = tuple(ref_out_size(*a, 1, ceil_mode) for a in zip(spatial, kernel_size, stride, padding))
    y = np.zeros(x.shape[:2] + out, dtype=x.dtype)
    for n, c in _planes(x):
        for o in itertools.product(*(range(v) for v in out)):
            total, inside, padded = 0.0, 0, 1
            for d in range(k):
                start = o[d] * stride[d] - padding[d]
                padded *= min(start + kernel_size[d], spatial[d] + padding[d]) - start
            for j in itertools.product(*(range(v) for v in kernel_size)):
                pos = tuple(o[d] * stride[d] - padding[d] + j[d] for d in range(k))
                if all(0 <= q < spatial[d] for d, q in enumerate(pos)):
                    total += x[(n, c) + pos]
                    inside += 1
            if inside:
                div = divisor_override or (padded if count_include_pad else inside)
                y[(n, c) + o] = total / div
    return y


def ref_avg_pool_backward(g, input_size, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
                          divisor_override=None):
    """The adjoint of ref_avg_pool, column by column (each input element's unit vector pooled)."""
    x = np.zeros(g.shape[:2] + tuple(input_size))
    out = np.zeros_like(x)
    for pos in itertools.product(*(range(v) for v in input_size)):
        x[(Ellipsis,) + pos] = 1
        y = ref_avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        out[(Ellipsis,) + pos] = (y * g).reshape(g.shape[:2] + (-1,)).sum(-1)
        x[(Ellipsis,) + pos] = 0
    return out


def _adaptive_bounds(o, size, out):
    return (o * size) // out, math.ceil((o + 1) * size / out)


def ref_adaptive_avg_pool(x, output_size):
    spatial = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(output_size), dtype=x.dtype)
    for o in itertools.product(*(range(v) for v in output_size)):
        sl = tuple(slice(*_adaptive_bounds(o[d], spatial[d], output_size[d])) for d in range(len(o)))
        y[(Ellipsis,) + o] = x[(Ellipsis,) + sl].reshape(x.shape[:2] + (-1,)).mean(-1)
    return y


def ref_adaptive_max_pool(x, output_size):
    spatial = x.shape[2:]
    values = np.empty(x.shape[:2] + tuple(output_size), dtype=x.dtype)
    indices = np.empty(x.shape[:2] + tuple(output_size), dtype=np.int64)
    for n, c in _planes(x):
        for o in itertools.product(*(range(v) for v in output_size)):
            bounds = [_adaptive_bounds(o[d], spatial[d], output_size[d]) for d in range(len(o))]
            best, best_i = -np.inf, tuple(lo for lo, _ in bounds)
            for pos in itertools.product(*(range(lo, hi) for lo, hi in bounds)):
                v = x[(n, c) + pos]
                if v > best or np.isnan(v):
                    best, best_i = v, pos
            values[(n, c) + o] = best
            indices[(n, c) + o] = np.ravel_multi_index(best_i, spatial)
    return values, indices


def ref_max_pool_backward(g, indices, input_size):
    out = np.zeros(g.shape[:2] + tuple(input_size), dtype=g.dtype)
    for n, c in _planes(g):
        flat = out[n, c].reshape(-1)
        for v, i in zip(g[n, c].reshape(-1), indices[n, c].reshape(-1)):
            flat[i] += v
    return out


def ref_max_unpool(x, indices, output_size):
    out = np.zeros(x.shape[:2] + tuple(output_size), dtype=x.dtype)
    for n, c in _planes(x):
        flat = out[n, c].reshape(-1)
        for v, i in zip(x[n, c].reshape(-1), indices[n, c].reshape(-1)):
            flat[i] = v
    return out


# -- cases ---------------------------------------------------------------------------------------------

def _ints(values) -> Arg:
    a = np.asarray(values, dtype=np.int64)
    return Arg(a.shape, "int64", values=a)


def _max_pool_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 8, 8), dtype), (2, 2), (2, 2), (0, 0), (1, 1), False), note="2x2 stride 2"),
        Sample((Arg((1, 2, 7), dtype), (3,), (2,), (1,), (1,), True), note="1-d, padding, ceil_mode"),
        Sample((Arg((2, 2, 6, 5), dtype, "transposed"), (3, 2), (2, 1), (1, 0), (1, 2), False),
               note="dilation, strided"),
        Sample((Arg((1, 2, 4, 5, 3), dtype), (2, 3, 2), (1, 2, 1), (1, 1, 0), (1, 1, 1), True), note="3-d"),
        Sample((Arg((0, 2, 4, 4), dtype), (2, 2), (2, 2), (0, 0), (1, 1), False), note="empty batch"),
    ]


def _max_pool_errors() -> list[ErrorCase]:
    x = Arg((1, 3, 2, 2), "float32")
    return [
        ErrorCase((x, (3, 3), (1, 1), (0, 0), (1, 1), False), RuntimeError,
                  "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"),
        ErrorCase((x, (2, 2), (1, 1), (2, 2), (1, 1), False), RuntimeError,
                  "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
        ErrorCase((Arg((3, 2, 2), "float32"), (2, 2), (1, 1), (0, 0), (1, 1), False), RuntimeError,
                  "max_pool2d: expected a 4D input"),
        ErrorCase((Arg((1, 1, 9, 9), "float32"), (2, 2), (1, 1), (2, 2), (3, 3), False), RuntimeError,
                  "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 2, "
                  "kH = 2"),
        ErrorCase((x, (2, 2), (0, 1), (0, 0), (1, 1), False), RuntimeError, "stride should not be zero"),
        ErrorCase((Arg((1, 2, 4, 4), "bool"), (2, 2), (2, 2), (0, 0), (1, 1), False), NotImplementedError,
                  "\"max_pool2d\" not implemented for 'Bool'"),
        ErrorCase((Arg((1, 2, 6), "bool"), (2,), (2,), (0,), (1,), False), NotImplementedError,
                  "\"max_pool2d\" not implemented for 'Bool'"),
        ErrorCase((Arg((1, 1, 2, 2, 2), "complex64"), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
                  NotImplementedError, "\"max_pool3d\" not implemented for 'ComplexFloat'"),
        ErrorCase((Arg((1, 3, 2, 2), "bool"), (3, 3), (1, 1), (0, 0), (1, 1), False), RuntimeError,
                  "Output size is too small"),  # the sizes are checked before the dtype
    ]


def _avg_pool_errors() -> list[ErrorCase]:
    return [
        ErrorCase((Arg((1, 2, 4, 4), "int32"), (2, 2), (2, 2), (0, 0)), NotImplementedError,
                  "\"avg_pool2d\" not implemented for 'Int'"),
        ErrorCase((Arg((1, 2, 4), "uint8"), (2,), (2,), (0,)), NotImplementedError,
                  "\"avg_pool2d\" not implemented for 'Byte'"),
        ErrorCase((Arg((1, 1, 2, 2, 2), "bool"), (2, 2, 2), (2, 2, 2), (0, 0, 0)), NotImplementedError,
                  "\"avg_pool3d_out_frame\" not implemented for 'Bool'"),
    ]


def _avg_pool_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 8, 8), dtype), (2, 2), (2, 2), (0, 0))),
        Sample((Arg((1, 2, 7), dtype), (3,), (2,), (1,), True, False, None), note="1-d, ceil, no pad counted"),
        Sample((Arg((2, 2, 6, 5), dtype, "transposed"), (3, 2), (2, 1), (1, 1), True, True, None)),
        Sample((Arg((1, 2, 4, 5, 3), dtype), (2, 3, 2), (1, 2, 1), (1, 1, 0), False, True, 3),
               note="3-d, divisor_override"),
    ]


def _avg_pool_backward_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 4, 4), dtype), (8, 8), (2, 2), (2, 2), (0, 0))),
        Sample((Arg((1, 2, 4), dtype), (7,), (3,), (2,), (1,), True, False, None)),
        Sample((Arg((2, 2, 4, 6), dtype, "transposed"), (6, 5), (3, 2), (2, 1), (1, 1), True, True, None)),
    ]


def _max_pool_backward_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((1, 2, 2, 2), dtype), _ints([[[[0, 3], [3, 8]], [[1, 1], [1, 1]]]]), (3, 3)),
               note="repeated indices add"),
        Sample((Arg((2, 1, 3), dtype), _ints([[[0, 2, 4]], [[1, 1, 0]]]), (5,))),
    ]


def _max_unpool_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((1, 2, 2, 2), dtype), _ints([[[[0, 3], [5, 8]], [[1, 2], [6, 7]]]]), (3, 3))),
        Sample((Arg((2, 1, 3), dtype), _ints([[[0, 2, 4]], [[1, 3, 5]]]), (6,))),
    ]


def _max_unpool_errors() -> list[ErrorCase]:
    return [ErrorCase((Arg((1, 1, 2), "float32"), _ints([[[0, 7]]]), (4,)), RuntimeError,
                      "Found an invalid max index: 7 (output volumes are of size 4x1)", data_dependent=True),
            ErrorCase((Arg((1, 1, 2), "int64"), _ints([[[0, 1]]]), (4,)), NotImplementedError,
                      "\"max_unpool2d\" not implemented for 'Long'"),
            ErrorCase((Arg((1, 1, 1, 1, 2), "int32"), _ints([[[[[0, 1]]]]]), (1, 1, 4)), NotImplementedError,
                      "\"max_unpool3d\" not implemented for 'Int'")]


def _adaptive_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 7, 5), dtype), (3, 2))),
        Sample((Arg((1, 2, 10), dtype, "transposed"), (4,))),
        Sample((Arg((1, 2, 3, 4, 5), dtype), (2, 3, 1))),
        Sample((Arg((8, 4, 2, 2), dtype), (1, 1)), note="global"),
    ]


def _adaptive_avg_backward_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 3, 2), dtype), (7, 5))),
        Sample((Arg((1, 2, 4), dtype), (10,))),
    ]


def _adaptive_errors(kind: str):
    def errors() -> list[ErrorCase]:
        return [
            ErrorCase((Arg((1, 2, 0, 4), "float32"), (2, 2)), RuntimeError,
                      "Expected input to have non-zero size for non-batch dimensions"),
            ErrorCase((Arg((1, 2, 4, 4), "int64"), (2, 2)), NotImplementedError,
                      f"\"{kind}2d\" not implemented for 'Long'"),
            ErrorCase((Arg((1, 2, 3, 4, 4), "uint8"), (2, 2, 2)), NotImplementedError,
                      f"\"{kind}3d_cpu\" not implemented for 'Byte'"),
        ]
    return errors


def cases() -> list[OpCase]:
    first = lambda s: s.args[0].dtype  # noqa: E731
    with_indices = lambda s: (s.args[0].dtype, "int64")  # noqa: E731
    return [
        OpCase("nn_max_pool", _MAX_DTYPES, _max_pool_samples, ref_max_pool, with_indices, errors=_max_pool_errors,
               tolerances=_LOOSE),
        OpCase("nn_max_pool_backward", _FLOATS, _max_pool_backward_samples, ref_max_pool_backward, first,
               tolerances=_LOOSE),
        OpCase("nn_max_unpool", _FLOATS, _max_unpool_samples, ref_max_unpool, first, errors=_max_unpool_errors,
               tolerances=_LOOSE),
        OpCase("nn_avg_pool", _AVG_DTYPES, _avg_pool_samples, ref_avg_pool, first, errors=_avg_pool_errors,
               tolerances=_LOOSE),
        OpCase("nn_avg_pool_backward", _FLOATS, _avg_pool_backward_samples, ref_avg_pool_backward, first,
               tolerances=_LOOSE),
        OpCase("nn_adaptive_avg_pool", _FLOATS, _adaptive_samples, ref_adaptive_avg_pool, first,
               errors=_adaptive_errors("adaptive_avg_pool"), tolerances=_LOOSE),
        OpCase("nn_adaptive_avg_pool_backward", _FLOATS, _adaptive_avg_backward_samples,
               lambda g, size: _adaptive_avg_backward(g, size), first, tolerances=_LOOSE),
        OpCase("nn_adaptive_max_pool", _FLOATS, _adaptive_samples, ref_adaptive_max_pool, with_indices,
               errors=_adaptive_errors("adaptive_max_pool"), tolerances=_LOOSE),
    ]


def _adaptive_avg_backward(g, input_size):
    """The adjoint of ref_adaptive_avg_pool: each output's gradient spread evenly over its window."""
    out = np.zeros(g.shape[:2] + tuple(input_size), dtype=g.dtype)
    output_size = g.shape[2:]
    for o in itertools.product(*(range(v) for v in output_size)):
        bounds = [_adaptive_bounds(o[d], input_size[d], output_size[d]) for d in range(len(o))]
        sl = tuple(slice(lo, hi) for lo, hi in bounds)
        count = math.prod(hi - lo for lo, hi in bounds)
        out[(Ellipsis,) + sl] += g[(Ellipsis,) + o].reshape(g.shape[:2] + (1,) * len(o)) / count
    return out

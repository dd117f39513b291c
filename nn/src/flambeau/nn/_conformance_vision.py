"""Conformance cases of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops.

``nn_resample`` is checked with the taps of real interpolation modes (``_ops.vision.resample_plan``)
against a numpy reference that applies the taps dim by dim with ``np.take`` and ``einsum``; the
backward op against the transposed map (``np.add.at``).
"""
from __future__ import annotations

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

from ._ops.vision import resample_plan

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOOSE = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1), "float32": (1e-5, 1e-5)}

_PLANS = [  # (mode, input shape, output sizes, align_corners, layout)
    ("bilinear", (2, 3, 5, 4), (7, 3), False, "contiguous"),
    ("bicubic", (1, 2, 4, 6), (5, 9), True, "transposed"),
    ("linear", (2, 3, 6), (4,), False, "contiguous"),
    ("trilinear", (1, 1, 3, 4, 2), (2, 5, 3), True, "contiguous"),
    ("area", (1, 2, 7, 5), (3, 2), False, "contiguous"),
    ("nearest", (2, 3, 5), (8,), False, "sliced"),
]


def _plan_args(mode, shape, sizes, align_corners):
    index, weight, taps = resample_plan(mode, shape[len(shape) - len(sizes):], sizes, align_corners,
                                        [None] * len(sizes))
    return Arg(index.shape, "int64", values=index), weight, taps


def _apply(x: np.ndarray, index: np.ndarray, weight: np.ndarray, taps) -> np.ndarray:
    k = len(taps)
    at = 0
    for d, (m, c) in enumerate(taps):
        dim = x.ndim - k + d
        idx = index[at:at + m * c].reshape(m, c)
        w = np.asarray(weight[at:at + m * c], dtype=np.float64).reshape(m, c)
        at += m * c
        g = np.moveaxis(np.take(x, idx, axis=dim), (dim, dim + 1), (-2, -1))  # (..., m, c)
        x = np.moveaxis(np.einsum("...mc,mc->...m", g, w) if c > 1 else g[..., 0], -1, dim)
    return x


def _resample_ref(x, index, weight, taps):
    return _apply(np.asarray(x, dtype=np.float64), index, weight, taps)


def _resample_backward_ref(g, index, weight, input_size, taps):
    # the transpose of a linear map, column by column: push each basis vector through
    n = int(np.prod(input_size))
    basis = np.eye(n).reshape((n,) + tuple(input_size))
    columns = np.stack([_apply(b, index, weight, taps).ravel() for b in basis], axis=1)
    return (np.asarray(g, dtype=np.float64).ravel() @ columns).reshape(input_size)


def _resample_samples(dtype: str) -> list[Sample]:
    out = []
    for mode, shape, sizes, ac, layout in _PLANS:
        index, weight, taps = _plan_args(mode, shape, sizes, ac)
        out.append(Sample((Arg(shape, dtype, layout), index, Arg(weight.shape, dtype, values=weight), taps),
                          note=mode))
    return out


def _resample_backward_samples(dtype: str) -> list[Sample]:
    out = []
    for mode, shape, sizes, ac, _ in _PLANS[:5]:
        index, weight, taps = _plan_args(mode, shape, sizes, ac)
        gshape = shape[:len(shape) - len(sizes)] + tuple(sizes)
        out.append(Sample((Arg(gshape, dtype), index, Arg(weight.shape, dtype, values=weight), shape, taps),
                          note=mode))
    return out


def _resample_errors() -> list[ErrorCase]:
    index, weight, taps = _plan_args("bilinear", (1, 1, 3, 3), (2, 2), False)
    w = Arg(weight.shape, "float32", values=weight)
    return [
        ErrorCase((Arg((1, 1, 3, 3), "float32"), Arg((3,), "int64", values=[0, 1, 2]), w, taps), RuntimeError,
                  "expected index of size [8], got [3]"),
        ErrorCase((Arg((1, 1, 3, 3), "float32"), index, w, ((2, 2),) * 4), RuntimeError,
                  "expected 1 to 3 resized dims"),
        ErrorCase((Arg((1, 1, 3, 3), "int64"), index, w, taps), RuntimeError,
                  "weighted taps need a floating point input"),
    ]


def cases() -> list[OpCase]:
    same = lambda s: s.args[0].dtype  # noqa: E731
    return [
        OpCase("nn_resample", _FLOATS, _resample_samples, _resample_ref, same, errors=_resample_errors,
               tolerances=_LOOSE),
        OpCase("nn_resample_backward", _FLOATS, _resample_backward_samples, _resample_backward_ref, same,
               tolerances=_LOOSE),
    ]

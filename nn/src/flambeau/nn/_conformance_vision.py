"""Conformance cases of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops.

``nn_resample`` is checked with the taps of real interpolation modes (``_ops.vision.resample_plan``)
against a numpy reference that applies the taps dim by dim with ``np.take`` and ``einsum``; the
backward op against the transposed map (column by column). Bilinear grid sampling against the
sampling written out in numpy, its grid gradient against central differences.
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


# -- bilinear grid sampling ----------------------------------------------------------------------------

def _source(coord: np.ndarray, size: int, padding_mode: str, align_corners: bool) -> np.ndarray:
    x = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo2 == hi2:
            x = np.zeros_like(x)
        else:
            lo, span = lo2 / 2, (hi2 - lo2) / 2
            v = np.abs(x - lo)
            extra, flips = np.fmod(v, span), np.floor(v / span)
            x = np.where(flips % 2 == 0, extra + lo, span - extra + lo)
    if padding_mode in ("border", "reflection"):
        x = np.clip(x, 0, size - 1)
    return x


def _grid_sample_ref(x, grid, padding_mode, align_corners):
    x = np.asarray(x, dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)
    n, c, h, w = x.shape
    ix = _source(grid[..., 0], w, padding_mode, align_corners)
    iy = _source(grid[..., 1], h, padding_mode, align_corners)
    x0, y0 = np.floor(ix), np.floor(iy)
    out = np.zeros((n, c) + grid.shape[1:3])
    for dx in (0, 1):
        for dy in (0, 1):
            cx, cy = x0 + dx, y0 + dy
            wgt = (1 - np.abs(ix - cx)) * (1 - np.abs(iy - cy))
            ok = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
            cxi, cyi = np.clip(cx, 0, w - 1).astype(int), np.clip(cy, 0, h - 1).astype(int)
            vals = x[np.arange(n)[:, None, None], :, cyi, cxi]  # (n, ho, wo, c)
            out += np.moveaxis(vals * (wgt * ok)[..., None], -1, 1)
    return out


def _grid_sample_backward_ref(g, x, grid, padding_mode, align_corners):
    """The input gradient (the map is linear in x) and the grid gradient by central differences."""
    x = np.asarray(x, dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    gx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1
        gx[i] = (g * _grid_sample_ref(e, grid, padding_mode, align_corners)).sum()
    gg = np.zeros_like(grid)
    eps = 1e-6
    for i in np.ndindex(grid.shape):
        d = np.zeros_like(grid)
        d[i] = eps
        hi = _grid_sample_ref(x, grid + d, padding_mode, align_corners)
        lo = _grid_sample_ref(x, grid - d, padding_mode, align_corners)
        gg[i] = (g * (hi - lo)).sum() / (2 * eps)
    return gx, gg


_GRIDS = [((2, 3, 4, 5), (2, 3, 2, 2), "zeros", False), ((1, 2, 3, 3), (1, 2, 3, 2), "border", True),
          ((1, 2, 5, 4), (1, 3, 2, 2), "reflection", False), ((2, 1, 3, 4), (2, 2, 2, 2), "reflection", True)]


def _grid_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(xs, dtype), Arg(gs, dtype, low=-1.3, high=1.3), pm, ac), note=pm) for xs, gs, pm, ac in _GRIDS]


def _grid_backward_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((xs[0], xs[1], gs[1], gs[2]), dtype), Arg(xs, dtype), Arg(gs, dtype, low=-1.3, high=1.3), pm,
                    ac), note=pm) for xs, gs, pm, ac in _GRIDS[:3]]


def _grid_errors() -> list[ErrorCase]:
    x = Arg((1, 1, 3, 3), "float32")
    return [
        ErrorCase((x, Arg((2, 2, 2, 2), "float32"), "zeros", False), RuntimeError,
                  "expected grid and input to have same batch size"),
        ErrorCase((x, Arg((1, 2, 2, 3), "float32"), "zeros", False), RuntimeError,
                  "expected grid to have size 2 in last dimension"),
    ]


def cases() -> list[OpCase]:
    same = lambda s: s.args[0].dtype  # noqa: E731
    return [
        OpCase("nn_resample", _FLOATS, _resample_samples, _resample_ref, same, errors=_resample_errors,
               tolerances=_LOOSE),
        OpCase("nn_resample_backward", _FLOATS, _resample_backward_samples, _resample_backward_ref, same,
               tolerances=_LOOSE),
        OpCase("nn_grid_sample_bilinear2d", ("float32", "float64"), _grid_samples, _grid_sample_ref, same,
               errors=_grid_errors, tolerances={"float32": (1e-5, 1e-5)}),
        OpCase("nn_grid_sample_bilinear2d_backward", ("float32", "float64"), _grid_backward_samples,
               _grid_sample_backward_ref, lambda s: (s.args[1].dtype, s.args[2].dtype),
               tolerances={"float32": (1e-4, 1e-4), "float64": (1e-6, 1e-6)}),
    ]

"""CPU kernels of flambeau-nn's vision ops (unused unless flambeau-nn declares them).

``nn_resample`` applies per-dim taps (see flambeau-nn's ``_ops/vision.py``) to the last dims: one
pass per resized dim through ``_C.nn_resample_axis`` (csrc/nn_vision.cpp), the last dim first,
float16/bfloat16 computing in float32. Dims whose taps are single copies (nearest) go through the
index gather of csrc/nn_padding.cpp in one pass, for every dtype. ``nn_grid_sample_bilinear2d`` and
its backward op run csrc/nn_vision.cpp's bilinear sampler (float32/float64; halves through float32).
The op declarations have checked
the sizes; the C++ code checks them again, and every tap index, before touching memory.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .. import _C
from .nn_padding import gather, scatter_add

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_HAVE_C = hasattr(_C, "nn_resample_axis")


def _split(index: np.ndarray, weight: np.ndarray, taps: Sequence[Sequence[int]]):
    at = 0
    for m, c in taps:
        yield (np.ascontiguousarray(index[at:at + m * c], dtype=np.int64),
               np.ascontiguousarray(weight[at:at + m * c], dtype=np.float64), int(m), int(c))
        at += m * c


def _axis(x: np.ndarray, dim: int, idx: np.ndarray, w: np.ndarray, m: int, c: int) -> np.ndarray:
    """One resampling pass along ``dim`` of a C-contiguous float32/float64 array."""
    outer = math.prod(x.shape[:dim])
    inner = math.prod(x.shape[dim + 1:])
    out = np.empty(x.shape[:dim] + (m,) + x.shape[dim + 1:], dtype=x.dtype)
    if out.size == 0:
        return out
    if _HAVE_C:
        _C.nn_resample_axis(x, out, outer, x.shape[dim], inner, idx, w, c)
        return out
    v = x.reshape(outer, x.shape[dim], inner)[:, idx.reshape(m, c), :]  # (outer, m, c, inner)
    out[...] = np.einsum("omci,mc->omi", v, w.reshape(m, c).astype(x.dtype)).reshape(out.shape)
    return out


def _axis_backward(g: np.ndarray, dim: int, in_size: int, idx: np.ndarray, w: np.ndarray, m: int,
                   c: int) -> np.ndarray:
    outer = math.prod(g.shape[:dim])
    inner = math.prod(g.shape[dim + 1:])
    out = np.zeros(g.shape[:dim] + (in_size,) + g.shape[dim + 1:], dtype=g.dtype)
    if out.size == 0 or g.size == 0:
        return out
    if _HAVE_C:
        _C.nn_resample_axis_backward(g, out, outer, in_size, inner, idx, w, c)
        return out
    spread = g.reshape(outer, m, 1, inner) * w.reshape(1, m, c, 1).astype(g.dtype)
    view = out.reshape(outer, in_size, inner)
    np.add.at(view, (slice(None), idx), spread.reshape(outer, m * c, inner))
    return out


def _gather_plan(shape: Sequence[int], parts: list, k: int) -> tuple[int, list[int], list[np.ndarray]]:
    lead = shape[:len(shape) - k]
    planes = math.prod(lead)
    sizes = [1] * (3 - k) + list(shape[len(shape) - k:])
    maps = [np.zeros(1, dtype=np.int64)] * (3 - k) + [p[0] for p in parts]
    return planes, sizes, maps


def nn_resample(input, index, weight, taps, out):
    k = len(taps)
    parts = list(_split(index, weight, taps))
    if all(c == 1 for *_, c in parts):  # nearest: a copy through index maps, any dtype
        planes, sizes, maps = _gather_plan(input.shape, parts, k)
        gather(input, out, planes, sizes, maps)
        return
    dt = input.dtype if input.dtype in (_F32, _F64) else _F32
    x = np.ascontiguousarray(input, dtype=dt)
    for d in reversed(range(k)):
        idx, w, m, c = parts[d]
        x = _axis(x, input.ndim - k + d, idx, w, m, c)
    np.copyto(out, x, casting="unsafe")


def nn_resample_backward(grad_output, index, weight, input_size, taps, out):
    k = len(taps)
    parts = list(_split(index, weight, taps))
    input_size = tuple(int(s) for s in input_size)
    if all(c == 1 for *_, c in parts):
        planes, sizes, maps = _gather_plan(input_size, parts, k)
        scatter_add(grad_output, out, planes, sizes, maps)
        return
    dt = grad_output.dtype if grad_output.dtype in (_F32, _F64) else _F32
    g = np.ascontiguousarray(grad_output, dtype=dt)
    for d in range(k):
        idx, w, m, c = parts[d]
        dim = len(input_size) - k + d
        g = _axis_backward(g, dim, input_size[dim], idx, w, m, c)
    np.copyto(out, g, casting="unsafe")


_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_work(input: np.ndarray, grid: np.ndarray) -> tuple[np.dtype, np.ndarray, np.ndarray]:
    dt = input.dtype if input.dtype in (_F32, _F64) else _F32
    return dt, np.ascontiguousarray(input, dtype=dt), np.ascontiguousarray(grid, dtype=dt)


def _target(out: np.ndarray, dt: np.dtype) -> np.ndarray:
    if out.dtype == dt and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dt)


def nn_grid_sample_bilinear2d(input, grid, padding_mode, align_corners, out):
    if out.size == 0:
        return
    dt, x, g = _grid_work(input, grid)
    work = _target(out, dt)
    _C.nn_grid_sample_bilinear2d(x, g, work, _PADDING[padding_mode], bool(align_corners))
    if work is not out:
        np.copyto(out, work, casting="unsafe")


def nn_grid_sample_bilinear2d_backward(grad_output, input, grid, padding_mode, align_corners, out):
    gx_out, gg_out = out
    if gx_out.size == 0 and gg_out.size == 0:
        return
    dt, x, g = _grid_work(input, grid)
    if x.size == 0 or grad_output.size == 0:
        gx_out.fill(0)
        gg_out.fill(0)
        return
    go = np.ascontiguousarray(grad_output, dtype=dt)
    gx, gg = _target(gx_out, dt), _target(gg_out, dt)
    _C.nn_grid_sample_bilinear2d_backward(go, x, g, gx, gg, _PADDING[padding_mode], bool(align_corners))
    for o, w in ((gx_out, gx), (gg_out, gg)):
        if w is not o:
            np.copyto(o, w, casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {
    "nn_resample": nn_resample,
    "nn_resample_backward": nn_resample_backward,
}
if hasattr(_C, "nn_grid_sample_bilinear2d"):  # an extension built before this kernel existed has none
    KERNELS["nn_grid_sample_bilinear2d"] = nn_grid_sample_bilinear2d
    KERNELS["nn_grid_sample_bilinear2d_backward"] = nn_grid_sample_bilinear2d_backward

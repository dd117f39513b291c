"""CPU kernels of flambeau-nn's padding ops (unused unless flambeau-nn declares them).

``nn_constant_pad_nd`` is numpy slicing into a filled array. Reflect and replicate padding build,
per padded dim, the input position each output position reads (the same index arithmetic as the
ops' composites in flambeau-nn, which the backend may not import) and hand the maps to
``_C.nn_index_gather`` / ``_C.nn_index_scatter_add`` (csrc/nn_padding.cpp), which check them.
The op declarations have checked the sizes before any kernel runs.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_HAVE_C = hasattr(_C, "nn_index_gather")


def _pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int, int]]:
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def nn_constant_pad_nd(input, pad, value, out):
    src = [slice(None)] * input.ndim
    dst = [slice(None)] * input.ndim
    for dim, left, right in _pairs(pad, input.ndim):
        size = input.shape[dim]
        src[dim] = slice(max(-left, 0), size - max(-right, 0))
        dst[dim] = slice(max(left, 0), max(left, 0) + max(size - max(-left, 0) - max(-right, 0), 0))
    out.fill(value)
    if out.size:
        out[tuple(dst)] = input[tuple(src)]


def pad_map(size: int, left: int, right: int, reflect: bool) -> np.ndarray:
    """The input position each output position of one padded dim reads."""
    i = np.arange(-left, size + right, dtype=np.int64)
    if reflect:
        i = np.abs(i)
        return np.where(i >= size, 2 * (size - 1) - i, i)
    return np.clip(i, 0, size - 1)


def _plan(shape: Sequence[int], pad: Sequence[int], reflect: bool) -> tuple[int, list[int], list[np.ndarray]]:
    """(planes, input sizes, maps) of the (planes, I0, I1, I2) view the C++ gather works on."""
    k = len(pad) // 2
    lead = shape[:len(shape) - k]
    planes = int(np.prod(lead, dtype=np.int64)) if lead else 1
    sizes = [1] * (3 - k) + list(shape[len(shape) - k:])
    maps = [np.zeros(1, dtype=np.int64)] * (3 - k)
    for d in range(k):  # dims in order; pad lists them from the last backwards
        i = k - 1 - d
        maps.append(pad_map(sizes[3 - k + d], pad[2 * i], pad[2 * i + 1], reflect))
    return planes, sizes, maps


def gather(input: np.ndarray, out: np.ndarray, planes: int, sizes: list[int], maps: list[np.ndarray]) -> None:
    """out[p, a, b, c] = input[p, maps[0][a], maps[1][b], maps[2][c]] over the (planes, *sizes) view."""
    if out.size == 0:
        return
    x = np.ascontiguousarray(input)
    if _HAVE_C and x.dtype.byteorder in "=|" and x.dtype.kind in "biufc":
        work = out if out.flags.c_contiguous and out.flags.aligned and out.flags.writeable else np.empty_like(out)
        _C.nn_index_gather(x, work, planes, sizes, maps)
        if work is not out:
            np.copyto(out, work)
        return
    v = x.reshape(planes, *sizes)
    out[...] = v[:, maps[0][:, None, None], maps[1][None, :, None], maps[2][None, None, :]].reshape(out.shape)


def scatter_add(grad: np.ndarray, out: np.ndarray, planes: int, sizes: list[int], maps: list[np.ndarray]) -> None:
    """The gradient of :func:`gather`: each grad element added into the input position it was read from."""
    if out.size == 0:
        return
    dt = grad.dtype if grad.dtype in (_F32, _F64) else _F32
    g = np.ascontiguousarray(grad, dtype=dt)
    if _HAVE_C:
        work = out if out.dtype == dt and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable \
            else np.empty(out.shape, dtype=dt)
        _C.nn_index_scatter_add(g, work, planes, sizes, maps)
    else:
        work = np.zeros((planes, *sizes), dtype=dt)
        idx = np.ix_(np.arange(planes), *maps)
        np.add.at(work, idx, g.reshape(planes, *(len(m) for m in maps)))
    if work is not out:
        np.copyto(out, work.reshape(out.shape), casting="unsafe")


def _pad_kernel(reflect: bool) -> Callable[..., Any]:
    def kernel(input, pad, out):
        planes, sizes, maps = _plan(input.shape, pad, reflect)
        gather(input, out, planes, sizes, maps)
    return kernel


def _pad_backward_kernel(reflect: bool) -> Callable[..., Any]:
    def kernel(grad_output, input, pad, out):
        planes, sizes, maps = _plan(input.shape, pad, reflect)
        scatter_add(grad_output, out, planes, sizes, maps)
    return kernel


KERNELS: dict[str, Callable[..., Any]] = {
    "nn_constant_pad_nd": nn_constant_pad_nd,
    "nn_reflection_pad": _pad_kernel(True),
    "nn_reflection_pad_backward": _pad_backward_kernel(True),
    "nn_replication_pad": _pad_kernel(False),
    "nn_replication_pad_backward": _pad_backward_kernel(False),
}

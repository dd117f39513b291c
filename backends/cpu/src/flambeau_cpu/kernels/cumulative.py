"""Kernels for the cumulative ops: cumsum, cumprod, cummax, cummin, logcumsumexp.

numpy's ``accumulate`` loops are used where the C++ scans (``_C.cumsum_lastdim``...) are absent
or not faster; see :func:`_native` for which one runs.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None

_NATIVE_DTYPES = ("float32", "float64", "int64")


def _native(name: str, input: np.ndarray, out: np.ndarray, dim: int) -> bool:
    """Runs the C++ scan along the last dim when it applies; says whether it did."""
    fn = getattr(_C, name, None)
    if fn is None or input.ndim == 0 or dim % input.ndim != input.ndim - 1 or input.size == 0:
        return False
    if out.dtype != input.dtype or out.dtype.name not in _NATIVE_DTYPES or not out.flags.c_contiguous:
        return False
    if input is not out and np.may_share_memory(input, out):
        return False  # a scan may run in place, but not over a partly overlapping view
    src = input if input.flags.c_contiguous else np.ascontiguousarray(input)
    fn(src, out)
    return True


def _scan(ufunc: np.ufunc, name: str) -> Callable[..., Any]:
    def kernel(input, dim, dtype, out):
        if input.ndim == 0:
            np.copyto(out, input, casting="unsafe")
            return
        if _native(name, input, out, dim):
            return
        src = input if input.dtype == out.dtype else input.astype(out.dtype)
        ufunc.accumulate(src, axis=dim, out=out)
    return kernel


def _cum_extreme(ufunc: np.ufunc) -> Callable[..., Any]:
    def kernel(input, dim, out):
        values, indices = out
        if input.ndim == 0:
            np.copyto(values, input)
            indices.fill(0)
            return
        if input.size == 0:
            return
        running = ufunc.accumulate(input, axis=dim)
        # A position takes over the index where it equals the running extreme (ties: the latest
        # one, as PyTorch's >=) or is NaN (every NaN takes over; nothing takes over from one).
        hit = running == input
        if input.dtype.kind == "f" or input.dtype.name == "bfloat16":
            hit |= np.isnan(input)
        shape = [1] * input.ndim
        shape[dim] = input.shape[dim]
        positions = np.arange(input.shape[dim], dtype=np.int64).reshape(shape)
        np.maximum.accumulate(np.where(hit, positions, 0), axis=dim, out=indices)
        np.copyto(values, running)
    return kernel


def logcumsumexp(input, dim, out):
    if input.ndim == 0:
        np.copyto(out, input)
        return
    src = input.astype(np.float32) if input.dtype.name in ("float16", "bfloat16") else input
    np.copyto(out, np.logaddexp.accumulate(src, axis=dim), casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {
    "cumsum": _scan(np.add, "cumsum_lastdim"), "cumprod": _scan(np.multiply, "cumprod_lastdim"),
    "cummax": _cum_extreme(np.maximum), "cummin": _cum_extreme(np.minimum), "logcumsumexp": logcumsumexp,
}

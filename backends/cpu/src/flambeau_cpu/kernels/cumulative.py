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

#: dtypes the C++ scans take (numpy dtype objects: comparing them is cheaper than their names)
_NATIVE_DTYPES = frozenset(np.dtype(n) for n in ("float32", "float64", "int64"))


def _native(fn: Any, input: np.ndarray, out: np.ndarray, dim: int) -> bool:
    """Runs the C++ scan ``fn`` along the last dim when it applies; says whether it did."""
    if fn is None or dim != -1 and dim != input.ndim - 1 or out.dtype != input.dtype:
        return False
    if input.dtype not in _NATIVE_DTYPES or not out.flags.c_contiguous:
        return False
    src = input if input.flags.c_contiguous else np.ascontiguousarray(input)
    try:
        fn(src, out)  # checks shapes, bounds and overlap again before writing
    except ValueError:  # out partly overlapping input, an unaligned view...: numpy copes
        return False
    return True


def _scan(ufunc: np.ufunc, name: str) -> Callable[..., Any]:
    fn = getattr(_C, name, None)

    def kernel(input, dim, dtype, out):
        if input.ndim == 0:
            np.copyto(out, input, casting="unsafe")
            return
        if input.size and _native(fn, input, out, dim):
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
        with np.errstate(invalid="ignore"):  # NaN propagates, as intended
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
    with np.errstate(invalid="ignore"):  # -inf - -inf inside logaddexp: the result is still right
        np.copyto(out, np.logaddexp.accumulate(src, axis=dim), casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {
    "cumsum": _scan(np.add, "cumsum_lastdim"), "cumprod": _scan(np.multiply, "cumprod_lastdim"),
    "cummax": _cum_extreme(np.maximum), "cummin": _cum_extreme(np.minimum), "logcumsumexp": logcumsumexp,
}

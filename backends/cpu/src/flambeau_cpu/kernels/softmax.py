"""Kernels for softmax, log_softmax and their backward ops (``_softmax_backward_data``,
``_log_softmax_backward_data``).

C-contiguous float32/float64 inputs reduced along their last dim go to the fused C++ kernels
(``flambeau_cpu._C.softmax_lastdim`` and friends: one read and one write per element, OpenMP over
rows); everything else (another dim, strided views, float16/bfloat16, which accumulate in float32)
runs the numpy code below, which subtracts each row's largest element before exponentiating.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from ._quiet import quiet_all

_softmax_lastdim = getattr(_C, "softmax_lastdim", None)
_softmax_backward_lastdim = getattr(_C, "softmax_backward_lastdim", None)

_F32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def _axis(a: np.ndarray, dim: int) -> Any:
    return None if a.ndim == 0 else dim % a.ndim


def _work(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a`` in the dtype the numpy path computes in: float32 for half precision."""
    work = dtype if dtype in _F32_64 else np.dtype(np.float32)
    return a if a.dtype == work else a.astype(work)


def _lastdim(input: np.ndarray, out: np.ndarray, dim: int) -> bool:
    return (input.ndim > 0 and dim % input.ndim == input.ndim - 1 and input.dtype == out.dtype
            and input.dtype in _F32_64 and input.size > 0)


def _forward(log: bool):
    def kernel(input, dim, dtype, out):
        if _softmax_lastdim is not None and _lastdim(input, out, dim) and _softmax_lastdim(input, out, log):
            return
        if out.size == 0:
            return
        axis = _axis(input, dim)
        x = _work(input, out.dtype)
        shifted = x - np.amax(x, axis=axis, keepdims=True)
        if log:
            result = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
        else:
            result = np.exp(shifted)
            result /= np.sum(result, axis=axis, keepdims=True)
        np.copyto(out, result, casting="unsafe")
    kernel.__name__ = "log_softmax" if log else "softmax"
    return kernel


def _backward(log: bool):
    def kernel(grad_output, output, dim, out):
        if (_softmax_backward_lastdim is not None and _lastdim(output, out, dim) and grad_output.dtype == out.dtype
                and _softmax_backward_lastdim(grad_output, output, out, log)):
            return
        if out.size == 0:
            return
        axis = _axis(output, dim)
        g = _work(grad_output, out.dtype)
        y = _work(output, out.dtype)
        if log:
            result = g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)
        else:
            gy = g * y
            result = gy - y * np.sum(gy, axis=axis, keepdims=True)
        np.copyto(out, result, casting="unsafe")
    kernel.__name__ = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    return kernel


KERNELS = quiet_all({
    "softmax": _forward(False),
    "log_softmax": _forward(True),
    "_softmax_backward_data": _backward(False),
    "_log_softmax_backward_data": _backward(True),
})

"""Fused kernels for flambeau-nn's normalization ops (``nn_layer_norm``, ``nn_batch_norm`` and their
backward ops), run by ``flambeau_cpu._C`` (csrc/nn_norm.cpp).

The backend never imports flambeau-nn: these are registered under the op names and used only when
that package declares the ops. The C++ code takes C-contiguous float32/float64 arrays of one dtype;
float16/bfloat16 inputs compute on float32 copies (statistics stay float32, as the ops declare),
other layouts on contiguous copies. Outputs are written through float working arrays where the
dispatcher's arrays cannot be used directly.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _work_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype in (_F32, _F64) else _F32


def _arr(a: np.ndarray | None, dtype: np.dtype) -> np.ndarray | None:
    """``a`` as a C-contiguous array of ``dtype`` (itself when it already is one)."""
    if a is None:
        return None
    return np.ascontiguousarray(a, dtype=dtype)


def _target(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An array the C++ code can write for ``out``: ``out`` itself, or a working array copied back by _store."""
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dtype)


def _store(out: np.ndarray, work: np.ndarray) -> None:
    if work is not out:
        np.copyto(out, work.reshape(out.shape), casting="unsafe")


def nn_layer_norm(input, normalized_shape, weight, bias, eps, out):
    dt = _work_dtype(input)
    n = math.prod(normalized_shape)
    rows = input.size // n if n else 0
    if n == 0 or rows == 0:  # nothing to normalize: PyTorch gives empty outputs and NaN statistics
        out[1].fill(np.nan)
        out[2].fill(np.nan)
        return
    x = _arr(input, dt)
    y, mean, rstd = (_target(o, dt) for o in out)
    _C.nn_layer_norm(x, _arr(weight, dt), _arr(bias, dt), float(eps), y, mean, rstd, rows, n)
    for o, w in zip(out, (y, mean, rstd)):
        _store(o, w)


def nn_layer_norm_backward(grad_out, input, mean, rstd, normalized_shape, weight, out):
    dt = _work_dtype(input)
    n = math.prod(normalized_shape)
    rows = input.size // n if n else 0
    if n == 0 or rows == 0:
        for o in out:
            o.fill(0)
        return
    gx, gw, gb = (_target(o, dt) for o in out)
    _C.nn_layer_norm_backward(_arr(grad_out, dt), _arr(input, dt), _arr(mean, dt), _arr(rstd, dt),
                              _arr(weight, dt), gx, gw, gb, rows, n)
    for o, w in zip(out, (gx, gw, gb)):
        _store(o, w)


def _bcs(input: np.ndarray) -> tuple[int, int, int]:
    s = math.prod(input.shape[2:])
    return input.shape[0], input.shape[1], s


def nn_batch_norm(input, weight, bias, running_mean, running_var, training, eps, out):
    dt = _work_dtype(input)
    b, c, s = _bcs(input)
    y, mean, var = (_target(o, dt) for o in out)
    if not training:
        np.copyto(mean, running_mean, casting="unsafe")
        np.copyto(var, running_var, casting="unsafe")
    if b * s == 0:
        if training:
            mean.fill(np.nan)
            var.fill(np.nan)
    else:
        _C.nn_batch_norm(_arr(input, dt), _arr(weight, dt), _arr(bias, dt), mean, var, bool(training), float(eps), y,
                         b, c, s)
    for o, w in zip(out, (y, mean, var)):
        _store(o, w)


def nn_batch_norm_backward(grad_out, input, mean, var, weight, training, eps, out):
    dt = _work_dtype(input)
    b, c, s = _bcs(input)
    if b * s == 0:
        for o in out:
            o.fill(0)
        return
    gx, gw, gb = (_target(o, dt) for o in out)
    _C.nn_batch_norm_backward(_arr(grad_out, dt), _arr(input, dt), _arr(mean, dt), _arr(var, dt), _arr(weight, dt),
                              bool(training), float(eps), gx, gw, gb, b, c, s)
    for o, w in zip(out, (gx, gw, gb)):
        _store(o, w)


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_layer_norm": nn_layer_norm, "nn_layer_norm_backward": nn_layer_norm_backward,
     "nn_batch_norm": nn_batch_norm, "nn_batch_norm_backward": nn_batch_norm_backward}
    if hasattr(_C, "nn_layer_norm") else {}  # an extension built before these kernels existed
)

"""Kernels for flambeau-nn's embedding ops (``nn_embedding``, ``nn_embedding_backward``), run by
``flambeau_cpu._C`` (csrc/nn_embedding.cpp).

The backend never imports flambeau-nn; the kernels are used only when that package declares the
ops. The gather moves whole rows of any dtype; the backward pass accumulates in float32/float64
(half gradients on a float32 working array). Index checks happen in C++ as the indices are read.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _indices(indices: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(indices).reshape(-1)


def nn_embedding(weight, indices, padding_idx, scale_grad_by_freq, out):
    w = np.ascontiguousarray(weight)
    target = out if out.flags.c_contiguous and out.flags.writeable and out.dtype == w.dtype else np.empty_like(out)
    _C.nn_embedding(w, _indices(indices), target)
    if target is not out:
        np.copyto(out, target)


def nn_embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, out):
    dt = grad.dtype if grad.dtype in (_F32, _F64) else _F32
    dim = grad.shape[-1]
    g = np.ascontiguousarray(grad, dtype=dt).reshape(-1, dim)
    direct = out.dtype == dt and out.flags.c_contiguous and out.flags.writeable
    target = out if direct else np.empty(out.shape, dtype=dt)  # the C++ code zeroes it
    padding = int(padding_idx) if padding_idx is not None and padding_idx >= 0 else -1
    _C.nn_embedding_backward(g, _indices(indices), target, padding, bool(scale_grad_by_freq))
    if not direct:
        np.copyto(out, target, casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_embedding": nn_embedding, "nn_embedding_backward": nn_embedding_backward}
    if hasattr(_C, "nn_embedding") else {}  # an extension built before these kernels existed
)

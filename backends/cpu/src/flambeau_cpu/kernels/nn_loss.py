"""Kernels for the loss ops flambeau-nn declares: ``nn_cross_entropy``, ``nn_nll_loss`` and their
backward ops.

The backend never imports flambeau-nn: these kernels stay unused unless it declares the ops.
Cross-entropy over C-contiguous float32/float64 (N, C) logits runs the fused C++ row loops
(``flambeau_cpu._C.cross_entropy_rows`` / ``cross_entropy_backward_rows``: log-softmax and the
NLL in one pass, the gradient in one more, without storing the softmax). The NLL over float32/float64
runs C++ row loops too (``nll_loss_rows``, reading one element per row through the input's strides,
and ``nll_loss_backward_rows``, writing the zeros and one element per row in one threaded pass).
Anything else runs the numpy code here; float16/bfloat16 compute in float32. The op's meta function has
checked every argument, the targets' values included; the C++ loops check the targets again in the
pass that reads them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from ._quiet import quiet_all

_ce_rows = getattr(_C, "cross_entropy_rows", None)
_ce_backward_rows = getattr(_C, "cross_entropy_backward_rows", None)
_nll_rows = getattr(_C, "nll_loss_rows", None)
_nll_backward_rows = getattr(_C, "nll_loss_backward_rows", None)

_F32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def _work_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype in _F32_64 else np.dtype(np.float32)


def _out_of_bounds(target: np.ndarray, row: int) -> IndexError:
    return IndexError(f"Target {int(target[row])} is out of bounds.")


def _picked(target: np.ndarray, weight: Any, ignore_index: int, work: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(safe class index per row, weight per row with ignored rows 0)."""
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    w = np.ones(len(target), dtype=work) if weight is None else weight[safe].astype(work, copy=False)
    return safe, w * kept


def _reduce_into(out: np.ndarray, losses: np.ndarray, weights: np.ndarray, reduction: str) -> None:
    if reduction == "none":
        np.copyto(out, losses, casting="unsafe")
    elif reduction == "sum":
        np.copyto(out, losses.sum(dtype=np.float64), casting="unsafe")
    else:
        np.copyto(out, losses.sum(dtype=np.float64) / weights.sum(dtype=np.float64), casting="unsafe")


def _row_scales(grad_output: np.ndarray, weights: np.ndarray, reduction: str, n: int, work: np.dtype) -> np.ndarray:
    """Each row's upstream factor: its gradient (none), the gradient (sum), over the total weight (mean)."""
    if reduction == "none":
        return np.ascontiguousarray(grad_output, dtype=work)
    g = np.float64(grad_output)
    if reduction == "mean":
        g = g / weights.sum(dtype=np.float64)  # 0 when every target is ignored: those rows get 0 anyway
    return np.full(n, g, dtype=work)


def nn_nll_loss(input, target, weight, reduction, ignore_index, out):
    if _nll_rows is not None and input.dtype in _F32_64:
        n = len(target)
        losses, weights = np.empty(n, dtype=input.dtype), np.empty(n, dtype=input.dtype)
        bad = _nll_rows(input, target, weight, int(ignore_index), losses, weights)
        if bad >= 0:
            raise _out_of_bounds(target, bad)
        if bad == -1:
            _reduce_into(out, losses, weights, reduction)
            return
    work = _work_dtype(input.dtype)
    safe, w = _picked(target, weight, ignore_index, work)
    picked = input[np.arange(len(target)), safe].astype(work, copy=False)
    _reduce_into(out, -picked * w, w, reduction)


def nn_nll_loss_backward(grad_output, input, target, weight, reduction, ignore_index, out):
    if _nll_backward_rows is not None and input.dtype in _F32_64:
        g = np.ascontiguousarray(grad_output, dtype=input.dtype)
        bad = _nll_backward_rows(g, reduction, target, weight, int(ignore_index), out)
        if bad >= 0:
            raise _out_of_bounds(target, bad)
        if bad == -1:
            return
    work = _work_dtype(input.dtype)
    safe, w = _picked(target, weight, ignore_index, work)
    scales = _row_scales(grad_output, w, reduction, len(target), work)
    out[...] = 0
    kept = w != 0
    rows = np.arange(len(target))
    out[rows[kept], safe[kept]] = -(w * scales)[kept]


def _log_softmax_rows(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def nn_cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing, out):
    n, c = input.shape
    work = _work_dtype(input.dtype)
    if _ce_rows is not None and input.dtype in _F32_64 and n and c:
        losses = np.empty(n, dtype=input.dtype)
        weights = np.empty(n, dtype=input.dtype)
        bad = _ce_rows(input, target, weight, int(ignore_index), float(label_smoothing), losses, weights)
        if bad >= 0:
            raise _out_of_bounds(target, bad)
        if bad == -1:
            _reduce_into(out, losses, weights, reduction)
            return
    safe, w = _picked(target, weight, ignore_index, work)
    logp = _log_softmax_rows(input.astype(work, copy=False)) if c else np.zeros((n, 0), dtype=work)
    losses = -logp[np.arange(n), safe] * w if c else np.zeros(n, dtype=work)
    if label_smoothing:
        eps = float(label_smoothing)
        cw = np.ones(c, dtype=work) if weight is None else weight.astype(work, copy=False)
        smooth = -(logp * cw).sum(axis=1) * (target != ignore_index)
        losses = losses * (1 - eps) + smooth * (eps / c)
    _reduce_into(out, losses, w, reduction)


def nn_cross_entropy_backward(grad_output, input, target, weight, reduction, ignore_index, label_smoothing, out):
    n, c = input.shape
    work = _work_dtype(input.dtype)
    safe, w = _picked(target, weight, ignore_index, work)
    scales = _row_scales(grad_output, w, reduction, n, work)
    if _ce_backward_rows is not None and input.dtype in _F32_64 and n and c:
        bad = _ce_backward_rows(scales, input, target, weight, int(ignore_index), float(label_smoothing), out)
        if bad >= 0:
            raise _out_of_bounds(target, bad)
        if bad == -1:
            return
    if not (n and c):
        return
    eps = float(label_smoothing)
    kept = target != ignore_index
    s = np.where(kept, scales, 0).astype(work)
    cw = np.ones(c, dtype=work) if weight is None else weight.astype(work, copy=False)
    p = np.exp(_log_softmax_rows(input.astype(work, copy=False)))
    a = w * (1 - eps) + cw.sum() * (eps / c)
    grad = p * (s * a)[:, None] - (s[:, None] * (eps / c)) * cw
    grad[np.arange(n)[kept], safe[kept]] -= (s * w * (1 - eps))[kept]
    np.copyto(out, grad, casting="unsafe")


KERNELS = quiet_all({
    "nn_nll_loss": nn_nll_loss,
    "nn_nll_loss_backward": nn_nll_loss_backward,
    "nn_cross_entropy": nn_cross_entropy,
    "nn_cross_entropy_backward": nn_cross_entropy_backward,
})

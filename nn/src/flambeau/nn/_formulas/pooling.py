"""Backward formulas of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops.

Each backward is itself an op with a formula, so double backward works: max pooling's backward
scatters through the saved indices (``nn_max_pool_backward``), whose own gradient gathers through
them; average pooling's forward and backward ops are each other's adjoint, so each one's formula
calls the other.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

_BOUND: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The op ``name``, bound at first use: formulas are imported while the registry is being filled."""
    fn = _BOUND.get(name)
    if fn is None:
        fn = _BOUND[name] = fb.ops.function(name)
    return fn


def _gather_planes(grad: Any, indices: Any) -> Any:
    """``grad[n, c, indices[n, c, ...]]``: each plane of ``grad`` read at the flat ``indices``."""
    n, c = indices.shape[0], indices.shape[1]
    return grad.reshape(n, c, -1).gather(2, indices.reshape(n, c, -1)).reshape(indices.shape)


def _max_pool(ctx: Any, grads: list) -> tuple:
    g = grads[0]
    if g is None or not ctx.needs(0):
        return (None,)
    _, indices = ctx.result
    return (_op("nn_max_pool_backward")(g, indices, tuple(ctx.shape(0)[2:])),)


def _max_pool_backward(ctx: Any, grad: Any) -> tuple:
    _, indices, _ = ctx.args
    return (_gather_planes(grad, indices) if ctx.needs(0) else None,)


def _max_unpool(ctx: Any, grad: Any) -> tuple:
    _, indices, _ = ctx.args
    return (_gather_planes(grad, indices) if ctx.needs(0) else None,)


def _avg_pool(ctx: Any, grad: Any) -> tuple:
    if not ctx.needs(0):
        return (None,)
    _, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override = ctx.args
    return (_op("nn_avg_pool_backward")(grad, tuple(ctx.shape(0)[2:]), kernel_size, stride, padding, ceil_mode,
                                        count_include_pad, divisor_override),)


def _avg_pool_backward(ctx: Any, grad: Any) -> tuple:
    if not ctx.needs(0):
        return (None,)
    _, _, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override = ctx.args
    return (_op("nn_avg_pool")(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override),)


def _adaptive_avg_pool(ctx: Any, grad: Any) -> tuple:
    if not ctx.needs(0):
        return (None,)
    return (_op("nn_adaptive_avg_pool_backward")(grad, tuple(ctx.shape(0)[2:])),)


def _adaptive_avg_pool_backward(ctx: Any, grad: Any) -> tuple:
    if not ctx.needs(0):
        return (None,)
    return (_op("nn_adaptive_avg_pool")(grad, tuple(ctx.shape(0)[2:])),)


def formulas() -> dict[str, Any]:
    return {
        "nn_max_pool": Formula(_max_pool, result=True),
        "nn_adaptive_max_pool": Formula(_max_pool, result=True),
        "nn_max_pool_backward": Formula(_max_pool_backward, save=("indices",)),
        "nn_max_unpool": Formula(_max_unpool, save=("indices",)),
        "nn_avg_pool": Formula(_avg_pool),
        "nn_avg_pool_backward": Formula(_avg_pool_backward),
        "nn_adaptive_avg_pool": Formula(_adaptive_avg_pool),
        "nn_adaptive_avg_pool_backward": Formula(_adaptive_avg_pool_backward),
    }

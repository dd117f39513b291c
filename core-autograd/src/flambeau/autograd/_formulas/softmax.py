"""Backward formulas of softmax, log_softmax and of their backward ops (for double backward).

The first derivatives go through ``_softmax_backward_data`` / ``_log_softmax_backward_data``, which a
backend may fuse into one pass per row; the formulas of those two ops are written with flambeau ops,
so that ``create_graph=True`` differentiates any number of times.
"""
from __future__ import annotations

from ..formula import Formula


def _fn(name: str):
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _rowsum(t, dim):
    """``t.sum(dim, keepdim=True)``; a 0-d tensor is its own row."""
    return t if t.dim() == 0 else t.sum(dim, keepdim=True)


def _softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.result
    return _fn("_softmax_backward_data")(g.to(y.dtype), y, dim)


def _log_softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.result
    return _fn("_log_softmax_backward_data")(g.to(y.dtype), y, dim)


def _softmax_backward_data(ctx, gg):
    # out = y * (g - s), s = sum(g * y): d/dg = softmax_backward(gg, y); d/dy = gg * (g - s) - g * sum(gg * y)
    g, y, dim = ctx.args
    grad_g = _fn("_softmax_backward_data")(gg, y, dim) if ctx.needs(0) else None
    grad_y = None
    if ctx.needs(1):
        grad_y = gg * (g - _rowsum(g * y, dim)) - g * _rowsum(gg * y, dim)
    return grad_g, grad_y


def _log_softmax_backward_data(ctx, gg):
    # out = g - exp(y) * S, S = sum(g): d/dg = gg - sum(gg * exp(y)); d/dy = -gg * exp(y) * S
    g, y, dim = ctx.args
    e = y.exp()
    grad_g = gg - _rowsum(gg * e, dim) if ctx.needs(0) else None
    grad_y = -(gg * e * _rowsum(g, dim)) if ctx.needs(1) else None
    return grad_g, grad_y


def formulas() -> dict[str, Formula]:
    return {
        "softmax": Formula(_softmax, result=True),
        "log_softmax": Formula(_log_softmax, result=True),
        "_softmax_backward_data": Formula(_softmax_backward_data, save=("grad_output", "output")),
        "_log_softmax_backward_data": Formula(_log_softmax_backward_data, save=("grad_output", "output")),
    }

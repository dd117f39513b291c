"""Backward formulas of the ordering ops (sort, msort, topk, kthvalue) and fmax/fmin."""
from __future__ import annotations

from ..formula import Formula
from ._scatter import scatter_along, scatter_values


def _sort(ctx, grads):
    _, dim, _descending, _stable = ctx.args
    return scatter_values(ctx, grads, dim)


def _msort(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    x = ctx.args[0]
    if x._data.ndim == 0:
        return g
    # msort has no indices output: the (stable) order is recomputed from the saved input.
    return scatter_along(g, FUNCTIONS["argsort"](x, 0, stable=True), 0, ctx.shape(0))


def _topk(ctx, grads):
    _, _k, dim, _largest, _sorted = ctx.args
    return scatter_values(ctx, grads, dim)


def _kthvalue(ctx, grads):
    _, _k, dim, keepdim = ctx.args
    return scatter_values(ctx, grads, dim, keepdim)


def _fmax(ctx, g):
    x, y = ctx.args
    # The first operand wins ties and wherever the second is NaN, as in PyTorch.
    import flambeau

    first = (x >= y).logical_or(y.isnan())
    zero = flambeau.zeros((), dtype=g._dtype, device=g._device)
    return (flambeau.where(first, g, zero) if ctx.needs(0) else None,
            flambeau.where(first, zero, g) if ctx.needs(1) else None)


def _fmin(ctx, g):
    x, y = ctx.args
    import flambeau

    first = (x <= y).logical_or(y.isnan())
    zero = flambeau.zeros((), dtype=g._dtype, device=g._device)
    return (flambeau.where(first, g, zero) if ctx.needs(0) else None,
            flambeau.where(first, zero, g) if ctx.needs(1) else None)


def formulas() -> dict[str, Formula]:
    return {
        "sort": Formula(_sort, result=True),
        "msort": Formula(_msort, save=("input",)),
        "topk": Formula(_topk, result=True),
        "kthvalue": Formula(_kthvalue, result=True),
        "fmax": Formula(_fmax, save=("input", "other")),
        "fmin": Formula(_fmin, save=("input", "other")),
    }

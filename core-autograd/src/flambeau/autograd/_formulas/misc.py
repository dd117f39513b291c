"""Backward formulas of copies, casts, fills and advanced indexing."""
from __future__ import annotations

from ..formula import Formula
from ._helpers import zeros, zeros_like


# ``copy_`` and ``fill_`` overwrite every element: the old value's gradient is zero, not absent
# (PyTorch's ``self: zeros_like(grad)``), so that the history behind it still runs backward (the
# leaves get zeros, and a saved tensor modified since is caught there).
def _copy(ctx, g):
    return (zeros_like(g) if ctx.needs(0) else None), (g if ctx.needs(1) else None)


def _fill(ctx, g):
    return (zeros_like(g) if ctx.needs(0) else None), (g.sum() if ctx.needs(1) else None)


def _index(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    indices = ctx.args[1]
    return FUNCTIONS["index_put"](zeros(ctx.shape(0), g), indices, g, True)


def _index_put(ctx, g):
    import flambeau
    from flambeau.ops._registry import FUNCTIONS

    _, indices, _values, accumulate = ctx.args
    gx = None
    if ctx.needs(0):
        gx = g if accumulate else FUNCTIONS["index_put"](g, indices, flambeau.zeros((), dtype=g._dtype,
                                                                                    device=g._device), False)
    gv = FUNCTIONS["index"](g, indices) if ctx.needs(2) else None
    return gx, None, gv


def formulas() -> dict[str, Formula]:
    return {
        "clone": Formula(lambda ctx, g: g),
        "to_dtype": Formula(lambda ctx, g: g),
        "copy": Formula(_copy),
        "fill": Formula(_fill),
        "index": Formula(_index, save=("indices",)),
        "index_put": Formula(_index_put, save=("indices",)),
    }

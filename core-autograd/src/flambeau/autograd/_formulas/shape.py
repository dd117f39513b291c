"""Backward formulas of the shape heading's primitives: cat, flip, roll, repeat, tril, triu, diag_embed,
and diagonal (a composite that backends may give a kernel).

Their composites (stack, split, chunk, tile, rot90, diagonal, diag, repeat_interleave...) are
differentiated through the ops they are written with, so they need no formula of their own.
"""
from __future__ import annotations

from flambeau._tensor import Tensor

from ..formula import Formula


def _cat_geometry(tensors, dim=0):
    """Each input's shape and the wrapped dim (the formula keeps no tensor alive)."""
    shapes = [tuple(t.shape) for t in tensors]
    kept = [s for s in shapes if s != (0,)]
    ndim = len(kept[0]) if kept else 1
    return shapes, dim % ndim


def _cat(ctx, g: Tensor):
    import flambeau

    shapes, d = ctx.kept
    grads, start = [], 0
    for shape in shapes:
        if shape == (0,):  # a legacy empty input took no part in the result
            grads.append(flambeau.zeros((0,), dtype=g._dtype, device=g._device))
            continue
        grads.append(g.narrow(d, start, shape[d]))
        start += shape[d]
    return (grads, None)


def _stack_geometry(tensors, dim=0):
    return len(tensors), dim % (tensors[0].dim() + 1)


def _stack(ctx, g: Tensor):
    count, d = ctx.kept
    return ([g.select(d, i) for i in range(count)], None)


def _flip(ctx, g: Tensor):
    return g.flip(ctx.args[1])


def _roll(ctx, g: Tensor):
    from flambeau.ops._registry import FUNCTIONS

    _, shifts, dims = ctx.args
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    return FUNCTIONS["roll"](g, tuple(-s for s in shifts), dims)


def _repeat(ctx, g: Tensor):
    repeats = ctx.args[1]
    repeats = (repeats,) if isinstance(repeats, int) else tuple(repeats)
    shape = tuple(ctx.shape(0))
    padded = (1,) * (len(repeats) - len(shape)) + shape
    # Each output dim of size r*n splits into (r, n): the r copies are summed away.
    split = []
    for r, n in zip(repeats, padded):
        split += [r, n]
    summed = g.reshape(tuple(split)).sum(tuple(range(0, 2 * len(repeats), 2))) if repeats else g
    return summed.reshape(shape)


def _tril(ctx, g: Tensor):
    return g.tril(ctx.args[1])


def _triu(ctx, g: Tensor):
    return g.triu(ctx.args[1])


def _diag_embed(ctx, g: Tensor):
    _, offset, dim1, dim2 = ctx.args
    return g.diagonal(offset, dim1, dim2)


def _diagonal(ctx, g: Tensor):
    import flambeau

    _, offset, dim1, dim2 = ctx.args
    z = flambeau.zeros(tuple(ctx.shape(0)), dtype=g._dtype, device=g._device)
    z.diagonal(offset, dim1, dim2).copy_(g)
    return z


def _complex(ctx, g: Tensor):
    # d(re + i*im): the real part of the incoming gradient goes to re, the imaginary part to im.
    return (g.real, g.imag) if g.is_complex() else (g, None)


def formulas() -> dict[str, Formula]:
    return {
        "cat": Formula(_cat, keep=_cat_geometry),
        "stack": Formula(_stack, keep=_stack_geometry),  # where a backend has a stack kernel (the CPU's)
        "flip": Formula(_flip),
        "roll": Formula(_roll),
        "repeat": Formula(_repeat),
        "tril": Formula(_tril),
        "triu": Formula(_triu),
        "diag_embed": Formula(_diag_embed),
        "complex": Formula(_complex),
        "diagonal": Formula(_diagonal),  # recorded where a backend has a diagonal kernel (the CPU's)
    }

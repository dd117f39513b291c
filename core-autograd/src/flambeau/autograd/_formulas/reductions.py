"""Backward formulas of the reductions."""
from __future__ import annotations

import math

from ..formula import Formula
from ._helpers import conj, reduction_dims, unsqueeze_dims


def _expand_back(ctx, g, dim, keepdim):
    shape = ctx.shape(0)
    dims = reduction_dims(dim, len(shape))
    return unsqueeze_dims(g, dims, len(shape), keepdim).expand(shape), dims


def _sum(ctx, g):
    _, dim, keepdim, _dtype = ctx.args
    return _expand_back(ctx, g, dim, keepdim)[0]


def _mean(ctx, g):
    _, dim, keepdim, _dtype = ctx.args
    shape = ctx.shape(0)
    out, dims = _expand_back(ctx, g, dim, keepdim)
    count = math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)
    return out / count if count else out


def _prod(ctx, g):
    import flambeau

    x, dim, keepdim, _dtype = ctx.args
    shape = ctx.shape(0)
    dims = reduction_dims(dim, len(shape))
    r = unsqueeze_dims(ctx.result, dims, len(shape), keepdim)
    g = unsqueeze_dims(g, dims, len(shape), keepdim)
    nonzero = x != 0
    safe = flambeau.where(nonzero, x, 1.0)
    if dims is None:
        others = safe.prod().reshape((1,) * len(shape)) if shape else safe.prod()
        zeros = nonzero.logical_not().sum().reshape((1,) * len(shape)) if shape else nonzero.logical_not().sum()
    else:
        others = safe.prod(dims[0], keepdim=True)
        zeros = nonzero.logical_not().sum(dims[0], keepdim=True)
    # With exactly one zero in a slice, that element's slope is the product of the others.
    at_zero = flambeau.where(zeros == 1, others, 0.0)
    # holomorphic: complex inputs take the conjugate of the slope
    return g * conj(flambeau.where(nonzero, r / safe, at_zero))


def _amax(ctx, g):
    x, dim, keepdim = ctx.args
    shape = ctx.shape(0)
    dims = reduction_dims(dim, len(shape))
    r = unsqueeze_dims(ctx.result, dims, len(shape), keepdim)
    g = unsqueeze_dims(g, dims, len(shape), keepdim)
    mask = (x == r).to(g._dtype)
    count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
    return g * mask / count


def _max_dim(ctx, grads):
    import flambeau

    g = grads[0]
    if g is None:
        return None
    _, dim, keepdim = ctx.args
    shape = ctx.shape(0)
    if not shape:
        return g
    d = dim % len(shape)
    idx = ctx.result[1]
    if not keepdim:
        g = g.unsqueeze(d)
        idx = idx.unsqueeze(d)
    positions = flambeau.arange(shape[d], device=g._device).reshape(
        tuple(shape[d] if i == d else 1 for i in range(len(shape))))
    return flambeau.where(positions == idx, g, 0.0)


def formulas() -> dict[str, Formula]:
    return {
        "sum": Formula(_sum),
        "mean": Formula(_mean),
        "prod": Formula(_prod, save=("input",), result=True),
        "amax": Formula(_amax, save=("input",), result=True),
        "amin": Formula(_amax, save=("input",), result=True),
        "max_dim": Formula(_max_dim, result=True),
        "min_dim": Formula(_max_dim, result=True),
    }

"""Backward formulas of the index ops (gather/scatter, index_* along a dim, masks, take).

Gathering ops send the gradient back with the matching scatter-add; writing ops route the
gradient of the overwritten positions to what was written there. All are written with flambeau
ops, so second derivatives follow.
"""
from __future__ import annotations

from typing import Sequence

from flambeau._tensor import Tensor

from ..formula import Formula
from ._helpers import conj, zeros


def _fb():
    import flambeau

    return flambeau


def _pad_to(g: Tensor, shape: Sequence[int]) -> Tensor:
    """``g`` in the leading corner of a zero tensor of ``shape`` (``src`` may be larger than ``index``)."""
    fb = _fb()
    for d, (have, want) in enumerate(zip(g.shape, shape)):
        if have != want:
            full = list(g.shape)
            full[d] = want
            g = zeros(full, g).index_add(d, fb.arange(have, device=g._device), g)
    return g


def _gather(ctx, g):
    _, dim, index, _sparse = ctx.args
    return zeros(ctx.shape(0), g).scatter_add(dim, index, g)


def _src_grad(ctx, g: Tensor, dim: int, index: Tensor, position: int) -> Tensor:
    return _pad_to(g.gather(dim, index), ctx.shape(position))


def _scatter(ctx, g):
    _, dim, index, src, _value, reduce = ctx.args
    if reduce is not None:
        # PyTorch records scatter with reduce= ('add' or 'multiply') as not differentiable and
        # refuses in backward with this error; scatter_add and scatter_reduce differentiate.
        raise RuntimeError("derivative for aten::scatter is not implemented")
    gx = g.scatter(dim, index, 0) if ctx.needs(0) else None
    gs = _src_grad(ctx, g, dim, index, 3) if ctx.needs(3) else None
    return gx, None, None, gs


def _scatter_add(ctx, g):
    _, dim, index, _src = ctx.args
    return (g if ctx.needs(0) else None), None, None, (_src_grad(ctx, g, dim, index, 3) if ctx.needs(3) else None)


def _scatter_reduce(ctx, g):
    input, dim, index, src, reduce, include_self = ctx.args
    gx, gs = _reduce_grads(g, input, dim, index, src, reduce, include_self, ctx.result, ctx.needs(3))
    return gx, None, None, (_pad_to(gs, ctx.shape(3)) if gs is not None else None)


def _reduce_grads(g: Tensor, input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool,
                  result: Tensor, needs_src: bool) -> tuple:
    """Gradients of ``scatter_reduce`` for ``input`` and for the part of ``src`` that ``index`` covers."""
    fb = _fb()
    if reduce == "sum":
        gx = g if include_self else g.scatter(dim, index, 0)
        return gx, (g.gather(dim, index) if needs_src else None)
    ones = fb.ones(tuple(index.shape), dtype=g._dtype, device=g._device)
    if reduce == "mean":
        count = zeros(tuple(g.shape), g).scatter_add(dim, index, ones)
        touched = count > 0
        count = count + 1 if include_self else fb.where(touched, count, 1.0)
        gx = g / count if include_self else fb.where(touched, 0.0, g)
        return gx, ((g / count).gather(dim, index) if needs_src else None)
    if reduce in ("amax", "amin"):
        # The gradient is shared evenly between every element equal to the result (PyTorch's rule).
        corner = src[tuple(slice(0, n) for n in index.shape)] if src.dim() else src
        src_hit = (corner == result.gather(dim, index)).to(g._dtype)
        self_hit = (input == result).to(g._dtype)
        if not include_self:
            self_hit = self_hit.scatter(dim, index, 0.0)
        count = self_hit.scatter_add(dim, index, src_hit)
        share = g / fb.where(count > 0, count, 1.0)
        return share * self_hit, (share.gather(dim, index) * src_hit if needs_src else None)
    if reduce == "prod":
        return _prod_grads(g, input, dim, index, src, include_self, needs_src)
    raise RuntimeError(f"the derivative for reduce='{reduce}' is not implemented")


def _prod_grads(g: Tensor, input: Tensor, dim: int, index: Tensor, src: Tensor, include_self: bool,
                needs_src: bool) -> tuple:
    """``scatter_reduce(..., 'prod')``'s gradients, exact with zeros among the factors.

    Each output is the product of its factors (the input's element when ``include_self``, and the
    ``src`` elements scattered there). A factor's slope is the product of the others: with no zero
    among them that is ``product / factor``; with exactly one zero, the zero factor's slope is the
    product of the nonzero ones and every other slope is 0; with two or more zeros all are 0.
    """
    fb = _fb()
    corner = src[tuple(slice(0, n) for n in index.shape)] if src.dim() else src
    src_zero = corner == 0
    src_safe = fb.where(src_zero, 1.0, corner)
    counts = fb.zeros(tuple(g.shape), dtype=g._dtype, device=g._device)
    if include_self:
        self_zero = input == 0
        base = fb.where(self_zero, 1.0, input)
        counts = counts + self_zero.to(g._dtype)
    else:
        base = fb.ones(tuple(g.shape), dtype=g._dtype, device=g._device)
    nonzero_product = base.scatter_reduce(dim, index, src_safe, "prod")
    zeros = counts.scatter_add(dim, index, src_zero.to(g._dtype))

    def slope(product: Tensor, n_zero: Tensor, is_zero: Tensor, safe: Tensor) -> Tensor:
        return fb.where(n_zero == 0, product / safe, fb.where((n_zero == 1) & is_zero, product, 0.0))

    if include_self:
        gx = g * slope(nonzero_product, zeros, self_zero, base)
    else:
        gx = g.scatter(dim, index, 0)
    gs = None
    if needs_src:
        gs = g.gather(dim, index) * slope(nonzero_product.gather(dim, index), zeros.gather(dim, index), src_zero,
                                          src_safe)
    return gx, gs


def _refuse_complex(op: str):
    """A ``keep`` hook: PyTorch refuses, when recording, to differentiate these ops' complex outputs."""
    def check(input, *_args):
        if input._dtype.is_complex:
            raise RuntimeError(f"{op} does not support automatic differentiation for outputs with complex dtype.")
    return check


def _index_reduce(ctx, g):
    input, dim, index, source, reduce, include_self = ctx.args
    result = ctx.result
    if not g.dim():  # a 0-d input: one slot, reduced with every element of source
        g, input, result = g.reshape(1), input.reshape(1), result.reshape(1)
    if not source.dim():
        source = source.reshape(1)
    d = dim % g.dim()
    # index_reduce is scatter_reduce with the index spread over the other dims of source.
    shape = [1] * source.dim()
    shape[d] = -1
    spread = index.reshape(shape).expand(*source.shape)
    gx, gs = _reduce_grads(g, input, d, spread, source, reduce, include_self, result, ctx.needs(3))
    return gx.reshape(tuple(ctx.shape(0))), None, None, (gs.reshape(tuple(ctx.shape(3))) if gs is not None else None)


def _index_select(ctx, g):
    _, dim, index = ctx.args
    return zeros(ctx.shape(0), g).index_add(dim, index.reshape(-1), g)


def _index_add(ctx, g):
    _, dim, index, _source, alpha = ctx.args
    gs = None
    if ctx.needs(3):
        gs = g.index_select(dim, index.reshape(-1)) if g.dim() else g
        gs = gs * conj(alpha) if alpha != 1 else gs
    return (g if ctx.needs(0) else None), None, None, gs


def _index_copy(ctx, g):
    _, dim, index, _source = ctx.args
    gx = g.index_fill(dim, index, 0) if ctx.needs(0) else None
    gs = (g.index_select(dim, index.reshape(-1)) if g.dim() else g) if ctx.needs(3) else None
    return gx, None, None, gs


def _index_fill(ctx, g):
    _, dim, index, value = ctx.args
    gx = g.index_fill(dim, index, 0) if ctx.needs(0) else None
    gv = None
    if ctx.needs(3):
        picked = g.index_select(dim, index.reshape(-1)) if g.dim() else g
        gv = picked.sum()
    return gx, None, None, gv


def _masked_fill(ctx, g):
    fb = _fb()
    _, mask, _value = ctx.args
    gx = g.masked_fill(mask, 0) if ctx.needs(0) else None
    gv = fb.where(mask, g, 0.0).sum() if ctx.needs(2) else None
    return gx, None, gv


def _broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    from flambeau.ops.meta import broadcast_shapes

    return broadcast_shapes(tuple(a), tuple(b))


def _masked_select(ctx, g):
    _, mask = ctx.args
    shape = _broadcast_shape(ctx.shape(0), ctx.shape(1))
    return zeros(shape, g).masked_scatter(mask, g)


def _masked_scatter(ctx, g):
    fb = _fb()
    _, mask, _source = ctx.args
    gx = g.masked_fill(mask, 0) if ctx.needs(0) else None
    gs = None
    if ctx.needs(2):
        picked = g.masked_select(mask)
        numel = 1
        for n in ctx.shape(2):
            numel *= n
        flat = zeros((numel,), g).index_add(0, fb.arange(picked.shape[0], device=g._device), picked)
        gs = flat.reshape(tuple(ctx.shape(2)))
    return gx, None, gs


def _take(ctx, g):
    _, index = ctx.args
    numel = 1
    for n in ctx.shape(0):
        numel *= n
    flat = index.reshape(-1)
    flat = flat.remainder(numel) if numel else flat  # negative indices count from the end
    return zeros((numel,), g).index_add(0, flat, g.reshape(-1)).reshape(tuple(ctx.shape(0)))


def _take_along_dim(ctx, g):
    from flambeau._core_ops.index_ops import take_along_dim_shape

    _, indices, dim = ctx.args
    xshape = tuple(ctx.shape(0))
    if dim is None:
        numel = 1
        for n in xshape:
            numel *= n
        return zeros((numel,), g).index_add(0, indices.reshape(-1), g.reshape(-1)).reshape(xshape)
    if not xshape:
        return g
    d = dim % len(xshape)
    out_shape = take_along_dim_shape(xshape, tuple(indices.shape), d)
    full = list(out_shape)
    full[d] = xshape[d]
    return zeros(full, g).scatter_add(d, indices.expand(*out_shape), g)


def formulas() -> dict[str, Formula]:
    return {
        "gather": Formula(_gather, save=("index",)),
        "scatter": Formula(_scatter, save=("index",)),
        "scatter_add": Formula(_scatter_add, save=("index",)),
        "scatter_reduce": Formula(_scatter_reduce, save=("input", "index", "src"), result=True,
                                  keep=_refuse_complex("scatter_reduce")),
        "index_reduce": Formula(_index_reduce, save=("input", "index", "source"), result=True,
                                keep=_refuse_complex("index_reduce")),
        "index_select": Formula(_index_select, save=("index",)),
        "index_add": Formula(_index_add, save=("index",)),
        "index_copy": Formula(_index_copy, save=("index",)),
        "index_fill": Formula(_index_fill, save=("index",)),
        "masked_fill": Formula(_masked_fill, save=("mask",)),
        "masked_select": Formula(_masked_select, save=("mask",)),
        "masked_scatter": Formula(_masked_scatter, save=("mask",)),
        "take": Formula(_take, save=("index",)),
        "take_along_dim": Formula(_take_along_dim, save=("indices",)),
    }

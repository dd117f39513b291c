"""Backward formulas of the view ops: the gradient is put back into the input's shape."""
from __future__ import annotations

import itertools

from flambeau._tensor import Tensor

from ..formula import Formula
from ._helpers import sum_to, zeros


def _reshape_back(ctx, g):
    return g.reshape(ctx.shape(0))


def _transpose(ctx, g):
    _, d0, d1 = ctx.args
    return g.transpose(d0, d1)


def _permute(ctx, g):
    dims = ctx.args[1]
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return g.permute(inverse)


def _expand(ctx, g):
    return sum_to(g, ctx.shape(0))


def _into_zeros(ctx, g, view):
    """A zero gradient of the input's shape with ``g`` written into the region ``view(z)``."""
    z = zeros(ctx.shape(0), g)
    view(z).copy_(g)
    return z


def _narrow(ctx, g):
    _, dim, start, length = ctx.args
    return _into_zeros(ctx, g, lambda z: z.narrow(dim, start, length))


def _select(ctx, g):
    _, dim, index = ctx.args
    return _into_zeros(ctx, g, lambda z: z.select(dim, index))


def _basic_index(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    index = ctx.args[1]
    return _into_zeros(ctx, g, lambda z: FUNCTIONS["basic_index"](z, index))


def _unfold(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    _, dimension, size, step = ctx.args
    shape = ctx.shape(0)
    z = zeros(shape, g)
    if not shape:
        return g.reshape(())
    d = dimension % len(shape)
    n = g.shape[d]
    for j in range(size):
        index = tuple(slice(None) for _ in range(d)) + (slice(j, j + (n - 1) * step + 1, step),)
        FUNCTIONS["basic_index"](z, index).add_(g.select(-1, j))
    return z


def _geometry(input: Tensor, size, stride, storage_offset=None):
    return (tuple(input.shape), input.stride(), input.storage_offset(), input._storage_numel())


def _overlaps(size, stride) -> bool:
    dims = sorted((st, sz) for sz, st in zip(size, stride) if sz > 1)
    extent = 1
    for st, sz in dims:
        if st < extent:
            return True
        extent = st * (sz - 1) + extent
    return False


def _as_strided(ctx, g):
    import flambeau

    _, size, stride, offset = ctx.args
    in_shape, in_stride, in_offset, storage = ctx.kept
    if offset is None:
        offset = in_offset
    buf = flambeau.zeros(storage, dtype=g._dtype, device=g._device)
    size, stride = tuple(size), tuple(stride)
    if not _overlaps(size, stride):
        buf.as_strided(size, stride, offset).copy_(g)
    else:  # several output elements share storage: add them one at a time
        for idx in itertools.product(*(range(s) for s in size)):
            pos = offset + sum(i * st for i, st in zip(idx, stride))
            buf.as_strided((), (), pos).add_(g[idx])
    return buf.as_strided(in_shape, in_stride, in_offset)


def _view_as_real(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    # the same numbers read back as complex; contiguous() gives the stride-1 pairs it needs
    return FUNCTIONS["view_as_complex"](g.contiguous())


def _view_as_complex(ctx, g):
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS["view_as_real"](g.contiguous())


def formulas() -> dict[str, Formula]:
    return {
        "view_as_real": Formula(_view_as_real),
        "view_as_complex": Formula(_view_as_complex),
        # conj(z) as a view: the gradient of a real loss through it is the conjugate (materialised,
        # so that no .grad is left a conjugated view)
        "_conj": Formula(lambda ctx, g: g.conj_physical()),
        "view": Formula(_reshape_back),
        "squeeze": Formula(_reshape_back),
        "unsqueeze": Formula(_reshape_back),
        "transpose": Formula(_transpose),
        "permute": Formula(_permute),
        "t": Formula(lambda ctx, g: g.t()),
        "expand": Formula(_expand),
        "narrow": Formula(_narrow),
        "select": Formula(_select),
        "basic_index": Formula(_basic_index),
        "unfold": Formula(_unfold),
        "as_strided": Formula(_as_strided, keep=_geometry),
    }

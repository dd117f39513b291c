"""Moving gradients along one dim by index, written with ``index``/``index_put`` (so they
differentiate again): the backward of sort, topk, kthvalue, median, mode, cummax..."""
from __future__ import annotations

from typing import Sequence

from flambeau._tensor import Tensor

from ._helpers import zeros


def _grid(index: Tensor, dim: int) -> tuple:
    """Index tensors that address ``t[..., index[...], ...]`` along ``dim``, others by position."""
    import flambeau

    shape = tuple(index.shape)
    grid = []
    for d, size in enumerate(shape):
        if d == dim:
            grid.append(index)
        else:
            view = [1] * len(shape)
            view[d] = size
            grid.append(flambeau.arange(size, device=index._device).reshape(tuple(view)))
    return tuple(grid)


def scatter_along(g: Tensor, index: Tensor, dim: int, shape: Sequence[int]) -> Tensor:
    """A zero tensor of ``shape`` with ``g`` added at ``index`` along ``dim`` (repeats accumulate)."""
    from flambeau.ops._registry import FUNCTIONS

    if len(shape) == 0:
        return g.reshape(())
    return FUNCTIONS["index_put"](zeros(shape, g), _grid(index, dim), g, True)


def take_along(t: Tensor, index: Tensor, dim: int) -> Tensor:
    """``t``'s elements at ``index`` along ``dim`` (numpy's ``take_along_axis``)."""
    from flambeau.ops._registry import FUNCTIONS

    if t._data.ndim == 0:
        return t
    return FUNCTIONS["index"](t, _grid(index, dim))


def restore_dim(t: Tensor, dim: int, ndim: int, keepdim: bool) -> Tensor:
    """Put back the one dim a reduction with ``keepdim=False`` removed."""
    return t if keepdim or ndim == 0 else t.unsqueeze(dim)


def scatter_values(ctx, grads, dim: int, keepdim: bool = True) -> Tensor | None:
    """The input gradient of a (values, indices) op: each value's gradient goes to its index."""
    g = grads[0]
    if g is None:
        return None
    shape = ctx.shape(0)
    if not shape:
        return g
    d = dim % len(shape)
    index = ctx.result[1]
    return scatter_along(restore_dim(g, d, len(shape), keepdim), restore_dim(index, d, len(shape), keepdim), d, shape)

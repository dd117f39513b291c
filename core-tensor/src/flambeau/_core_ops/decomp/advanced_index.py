"""Advanced indexing (``index``: ``x[idx_0, None, mask, ...]``, and ``index_put``) onto the core tier.

Masks become their ``nonzero`` coordinates, so that every indexed dim holds an integer tensor;
those are checked against their dims' sizes and wrapped (negatives count from the end), then
broadcast together. The indexed dims are moved to the front and merged into one, whose position
is the row-major combination of the indices (``i_0 * size_1 * ... + i_1 * ... + i_k``), so that
one ``index_select`` (a ``gather``) picks every result slab. The result's dims then follow
PyTorch's placement rule: the index dims where the first indexed dim was when the indexed dims
are adjacent, in front otherwise. ``index_put`` lays ``values`` out the same way and writes the
slabs with ``scatter`` (``scatter_add`` when accumulating) into a copy of that layout, moved back.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op
from .indexing import _first_outside, _wrapped


def _integer_indices(x: Tensor, indices: Sequence[Any]) -> list[Any]:
    """One entry per dim of ``x``: None, or an int64 tensor of positions, checked and wrapped."""
    from ... import _dtypes

    shape = tuple(x._data.shape)
    key: list[Any] = []
    for idx in indices:
        if idx is None:
            key.append(None)
        elif idx._dtype is _dtypes.bool or idx._dtype is _dtypes.uint8:
            coords = op("nonzero")(idx.to(_dtypes.bool) if idx._dtype is _dtypes.uint8 else idx)
            key.extend(coords.select(1, j) for j in range(idx._data.ndim))
        else:
            dim, size = len(key), shape[len(key)]
            bad = _first_outside(idx, -size, size)
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
            key.append(_wrapped(as_dtype(idx, _dtypes.int64), size))
    return key + [None] * (len(shape) - len(key))


class _Layout:
    """``x``'s indexed dims moved to the front and merged: ``front`` (a copy or view of that
    layout), the merged positions ``linear`` (flattened, one per picked slab), the broadcast index
    shape ``common``, and the permutation between the index result's dims and ``common + rest``."""

    def __init__(self, x: Tensor, indices: Sequence[Any]) -> None:
        from ...ops.meta import broadcast_shapes

        key = _integer_indices(x, indices)
        shape = tuple(x._data.shape)
        self.positions = [d for d, k in enumerate(key) if k is not None]
        self.rest = [d for d, k in enumerate(key) if k is None]
        if not self.positions:
            return
        self.common = tuple(broadcast_shapes(*(tuple(key[d]._data.shape) for d in self.positions)))
        linear = None
        merged = 1
        for d in self.positions:  # row-major position in the merged indexed dims
            idx = key[d].expand(self.common)
            linear = idx if linear is None else linear * shape[d] + idx
            merged *= shape[d]
        self.linear = linear.reshape(-1)
        self.rest_shape = tuple(shape[d] for d in self.rest)
        self.permuted_shape = tuple(shape[d] for d in self.positions + self.rest)
        self.front = x.permute(self.positions + self.rest).reshape((merged,) + self.rest_shape)
        # the index result's dim order, from common + rest
        first, nb, nr = self.positions[0], len(self.common), len(self.rest)
        if self.positions == list(range(first, self.positions[-1] + 1)) and first > 0:
            self.order = [nb + i for i in range(first)] + list(range(nb)) + [nb + i for i in range(first, nr)]
        else:
            self.order = list(range(nb + nr))

    def to_result(self, picked: Tensor) -> Tensor:
        return picked.reshape(self.common + self.rest_shape).permute(self.order)

    def from_result(self, values: Tensor) -> Tensor:
        """``values`` (of the index result's shape) in the front layout: (picked slabs, *rest)."""
        inverse = [0] * len(self.order)
        for i, o in enumerate(self.order):
            inverse[o] = i
        return values.permute(inverse).reshape((self.linear._data.shape[0],) + self.rest_shape)

    def back(self, front: Tensor) -> Tensor:
        """The front layout written back to ``x``'s dim order (a new tensor)."""
        inverse = [0] * len(self.positions + self.rest)
        for i, d in enumerate(self.positions + self.rest):
            inverse[d] = i
        return front.reshape(self.permuted_shape).permute(inverse).clone()


@decomposition("index", "nonzero select lt ge bitwise_or sum masked_select add mul where permute reshape expand "
               "index_select clone to_dtype")
def _index(x: Tensor, indices: Sequence[Any]) -> Tensor:
    layout = _Layout(x, indices)
    if not layout.positions:
        return x.clone()
    result = layout.to_result(op("index_select")(layout.front, 0, layout.linear))
    return result.clone() if result._base is not None else result


@decomposition("index_put", "nonzero select lt ge bitwise_or sum masked_select add mul where permute reshape "
               "expand scatter scatter_add clone to_dtype")
def _index_put(x: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> Tensor:
    from ..indexing import indexed_shape

    layout = _Layout(x, indices)
    target = indexed_shape(x, indices)
    values = values.expand(target)
    if not layout.positions:
        return (x + values) if accumulate else values.clone()
    slabs = layout.from_result(values)
    along = layout.linear.reshape((-1,) + (1,) * len(layout.rest)).expand(tuple(slabs._data.shape))
    front = layout.front.clone()
    written = op("scatter_add" if accumulate else "scatter")(front, 0, along, slabs)
    return layout.back(written)

"""Advanced indexing (``index``: ``x[idx_0, None, mask, ...]``) onto the core tier.

Masks become their ``nonzero`` coordinates, so that every indexed dim holds an integer tensor;
those are checked against their dims' sizes and wrapped (negatives count from the end), then
broadcast together. The indexed dims are moved to the front and merged into one, whose position
is the row-major combination of the indices (``i_0 * size_1 * ... + i_1 * ... + i_k``), so that
one ``index_select`` (a ``gather``) picks every result slab. The result's dims then follow
PyTorch's placement rule: the index dims where the first indexed dim was when the indexed dims
are adjacent, in front otherwise.
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


@decomposition("index", "nonzero select lt ge bitwise_or sum masked_select add mul where permute reshape expand "
               "index_select clone to_dtype")
def _index(x: Tensor, indices: Sequence[Any]) -> Tensor:
    from ...ops.meta import broadcast_shapes

    key = _integer_indices(x, indices)
    positions = [d for d, k in enumerate(key) if k is not None]
    if not positions:
        return x.clone()
    shape = tuple(x._data.shape)
    rest = [d for d, k in enumerate(key) if k is None]
    common = tuple(broadcast_shapes(*(tuple(key[d]._data.shape) for d in positions)))
    linear = None
    for d in positions:  # row-major position in the merged indexed dims
        idx = key[d].expand(common)
        linear = idx if linear is None else linear * shape[d] + idx
    merged = 1
    for d in positions:
        merged *= shape[d]
    front = x.permute(positions + rest).reshape((merged,) + tuple(shape[d] for d in rest))
    picked = op("index_select")(front, 0, linear.reshape(-1))
    result = picked.reshape(common + tuple(shape[d] for d in rest))
    first = positions[0]
    if positions == list(range(first, positions[-1] + 1)) and first > 0:
        nb, nr = len(common), len(rest)
        before = [nb + i for i in range(first)]  # the rest dims that preceded the indexed ones
        order = before + list(range(nb)) + [nb + i for i in range(first, nr)]
        result = result.permute(order)
    return result.clone() if result._base is not None else result

"""Declarations of advanced indexing: ``index`` (``x[idx]``) and ``index_put`` (``x[idx] = v``).

Both take ``indices``, one entry per leading dim of ``input``: None leaves the dim alone, an
integer tensor (int64 or int32) picks positions along it, a bool (or uint8) mask of k dims
covers k dims and stands for its ``nonzero()`` coordinates. The integer indices (masks expanded)
broadcast together; when the indexed dims are adjacent, the broadcast dims replace them in
place, otherwise they go first (PyTorch's rule, which is numpy's once ints and slices have been
applied as views: ``_indexing`` does that before calling these ops).

Checks that need only shapes and dtypes are made here; an index out of range can only be
seen in the data, so the backend's kernel raises that IndexError before writing anything.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import fmt_shape, type_name

_INTEGER_INDEX = (_dtypes.int64, _dtypes.int32)
_MASK = (_dtypes.bool, _dtypes.uint8)


def _mask_count(mask: Tensor) -> int:
    """How many elements of ``mask`` are set: the length its ``nonzero()`` would have."""
    return int(np.count_nonzero(np.asarray(mask._host())))


def indexed_shape(input: Tensor, indices: Sequence[Any]) -> tuple[int, ...]:
    """The shape of ``input[indices]`` for an ``index`` op's indices, with PyTorch's errors."""
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"index(): argument 'indices' must be a sequence of Tensors or None, "
                        f"not {type(indices).__name__}")
    shape = tuple(input._data.shape)
    per_dim: list[tuple[int, ...] | None] = []  # the index shape of each indexed dim, masks expanded
    for idx in indices:
        dim = len(per_dim)
        if idx is None:
            per_dim.append(None)
            continue
        if idx._dtype in _MASK:
            if idx._dtype is _dtypes.uint8:
                warnings.warn("indexing with dtype flambeau.uint8 is now deprecated, please use a dtype "
                              "flambeau.bool instead.", UserWarning, stacklevel=5)
            if idx._data.ndim == 0:
                raise IndexError("index(): a 0-dim mask must be applied by the indexing front end "
                                 "(tensor[mask]), not passed to the op")
            if dim + idx._data.ndim > len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)} "
                                 f"(got {dim + idx._data.ndim})")
            for j, size in enumerate(idx._data.shape):
                if size != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {fmt_shape(idx._data.shape)} at index {j} does not match the shape "
                        f"of the indexed tensor {fmt_shape(shape)} at index {dim + j}"
                    )
            count = _mask_count(idx)
            per_dim.extend((count,) for _ in range(idx._data.ndim))
        elif idx._dtype in _INTEGER_INDEX:
            per_dim.append(tuple(idx._data.shape))
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if len(per_dim) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(per_dim)})")
    positions = [d for d, s in enumerate(per_dim) if s is not None]
    if not positions:
        return shape
    broadcast = _broadcast_index_shapes([per_dim[d] for d in positions])
    rest = [s for d, s in enumerate(shape) if d >= len(per_dim) or per_dim[d] is None]
    if positions == list(range(positions[0], positions[-1] + 1)):
        first = positions[0]
        return shape[:first] + broadcast + shape[positions[-1] + 1:]
    return broadcast + tuple(rest)


def _broadcast_index_shapes(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    result = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s):
            at = ndim - len(s) + i
            if size != result[at] and size != 1 and result[at] != 1:
                raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                                 + ", ".join(fmt_shape(x) for x in shapes))
            if size != 1:
                result[at] = size
    return tuple(result)


def _index_meta(input: Tensor, indices: Sequence[Any]) -> tuple:
    return indexed_shape(input, indices), input._dtype


def _index_put_meta(input: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> tuple:
    target = indexed_shape(input, indices)
    if values._dtype is not input._dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {type_name(input._dtype)} for the "
            f"destination and {type_name(values._dtype)} for the source."
        )
    vshape = tuple(values._data.shape)
    fits = len(vshape) <= len(target) and all(
        v == 1 or v == t for v, t in zip(reversed(vshape), reversed(target)))
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {fmt_shape(vshape)} cannot be broadcast to "
                           f"indexing result of shape {fmt_shape(target)}")
    return tuple(input._data.shape), input._dtype


def declarations() -> list[OpDecl]:
    return [
        OpDecl("index", "(input: Tensor, indices: Tensor?[])", _index_meta, method=False, export=False,
               doc="``input[indices]`` for a list of index tensors (or None), one per leading dim.\n\n"
                   "Integer tensors pick positions, bool masks select where they are set; the result is a "
                   "copy. ``tensor[...]`` calls this after applying ints and slices as views."),
        OpDecl("index_put", "(input: Tensor, indices: Tensor?[], values: Tensor, accumulate=False)",
               _index_put_meta, inplace=True, export=True,
               doc="Writes ``values`` (broadcast) to ``input[indices]``; adds them when ``accumulate`` is True "
                   "(repeated indices then add up). ``index_put_`` writes into ``input``; ``index_put`` "
                   "returns a new tensor.\n\n"
                   "Example::\n\n"
                   "    >>> x = fb.zeros(3)\n"
                   "    >>> x.index_put_((fb.tensor([0, 0, 2]),), fb.tensor(1.), accumulate=True)\n"
                   "    tensor([2., 0., 1.])"),
    ]

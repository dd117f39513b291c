"""Kernels for advanced indexing (integer tensors and boolean masks).

``indices`` holds one entry per leading dim of ``input``: None, an integer array, or a bool/uint8
mask covering as many dims as it has. Masks are expanded to their nonzero coordinates, so that
numpy sees only slices and integer arrays, whose placement rule is PyTorch's.

``v[idx]`` with one integer index is C++'s gather of whole slabs along dim 0 (``dim_index``, each
index checked as it is used). Everything else is numpy's, on private copies of the indices and
masks: numpy releases the GIL while it indexes, and its own bounds check is a pass of its own, so
an index another thread changes in between would be trusted unchecked.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .index_ops_np import private

try:
    from .. import _C
    from .._C import dim_index as _dim_index
except (ImportError, AttributeError):  # a source checkout without the extension built
    _C = _dim_index = None


def _numpy_key(input: np.ndarray, indices) -> tuple:
    """A numpy index for ``input`` from private copies of the op's indices, each integer index checked."""
    key: list[Any] = []
    for idx in indices:
        if idx is None:
            key.append(slice(None))
        elif idx.dtype.kind in "bu" and idx.dtype.itemsize == 1:
            key.extend(np.nonzero(private(idx, bool)))
        else:
            dim = len(key)
            size = input.shape[dim]
            idx = private(idx, np.intp)
            if idx.size:
                bad = (idx >= size) | (idx < -size)
                if bad.any():
                    value = int(idx[bad].flat[0])
                    raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {size}")
            key.append(idx)
    return tuple(key)


def _whole_mask(input: np.ndarray, indices, out: np.ndarray) -> bool:
    """``out = input[mask]`` by the C++ compaction when one bool mask covers every dim."""
    if len(indices) != 1 or _C is None or input.ndim == 0:
        return False
    mask = indices[0]
    if mask is None or mask.dtype != np.bool_ or mask.shape != input.shape or out.dtype != input.dtype:
        return False
    return _C.masked_select(input, mask, out) is not None


def _one_index(input: np.ndarray, idx: Any, out: np.ndarray, existing: bool) -> bool:
    """``out[...] = input[idx]`` for one integer index, by C++; False when it declines."""
    if _dim_index is None or idx is None or idx.dtype.kind != "i" or input.ndim == 0 or not out.flags.c_contiguous:
        return False
    flat = idx.reshape(-1)
    if existing:
        flat = private(flat, flat.dtype)
    # `out` is C-contiguous, so this reshape is a view of it: (k, *input.shape[1:]).
    slabs = out.reshape((flat.shape[0],) + input.shape[1:])
    return _dim_index(0, slabs, input, flat, 0, True, 1.0, None, existing, True)


def _index(input, indices, out, existing):
    if len(indices) == 1 and (_whole_mask(input, indices, out) or _one_index(input, indices[0], out, existing)):
        return
    np.copyto(out, input[_numpy_key(input, indices)], casting="unsafe")


def index(input, indices, out):
    _index(input, indices, out, False)


index.into_existing = lambda input, indices, out: _index(input, indices, out, True)  # type: ignore[attr-defined]


def index_put(input, indices, values, accumulate, out):
    key = _numpy_key(input, indices)  # checked (on private copies) before anything is written
    if out is not input:
        np.copyto(out, input)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values


KERNELS: dict[str, Callable[..., Any]] = {"index": index, "index_put": index_put}

"""numpy kernels for advanced indexing (integer tensors and boolean masks).

``indices`` holds one entry per leading dim of ``input``: None, an integer array, or a bool/uint8
mask covering as many dims as it has. Masks are expanded to their nonzero coordinates, so that
numpy sees only slices and integer arrays, whose placement rule is PyTorch's.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None


def _numpy_key(input: np.ndarray, indices) -> tuple:
    """A numpy index for ``input`` from the op's indices, every integer index checked in range."""
    key: list[Any] = []
    for idx in indices:
        if idx is None:
            key.append(slice(None))
        elif idx.dtype.kind in "bu" and idx.dtype.itemsize == 1:
            key.extend(np.nonzero(idx.astype(bool, copy=False)))
        else:
            dim = len(key)
            size = input.shape[dim]
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


def index(input, indices, out):
    if _whole_mask(input, indices, out):
        return
    np.copyto(out, input[_numpy_key(input, indices)], casting="unsafe")


def index_put(input, indices, values, accumulate, out):
    key = _numpy_key(input, indices)  # checked before anything is written
    if out is not input:
        np.copyto(out, input)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values


KERNELS: dict[str, Callable[..., Any]] = {"index": index, "index_put": index_put}

"""numpy kernels for advanced indexing (integer tensors and boolean masks).

``indices`` holds one entry per leading dim of ``input``: None, an integer array, or a bool/uint8
mask covering as many dims as it has. Masks are expanded to their nonzero coordinates, so that
numpy sees only slices and integer arrays, whose placement rule is PyTorch's.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


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


def index(input, indices, out):
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

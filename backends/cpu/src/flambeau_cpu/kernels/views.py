"""numpy kernels for view ops: each returns a view of its input, never a copy."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _storage


def view(input, size):
    result = input.view()
    result.shape = tuple(size)  # raises rather than copying; the meta function has checked it fits
    return result


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return input.view()
    return np.swapaxes(input, dim0, dim1)


def permute(input, dims):
    return np.transpose(input, tuple(dims))


def t(input):
    return input.T


def expand(input, size):
    offset = len(size) - input.ndim
    shape = tuple(input.shape[i - offset] if s == -1 else s for i, s in enumerate(size))
    return np.broadcast_to(input, shape)


def squeeze(input, dim):
    if dim is None:
        return np.squeeze(input)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if input.ndim == 0:
        return input.view()
    axes = tuple(d % input.ndim for d in dims if input.shape[d] == 1)
    return np.squeeze(input, axis=axes) if axes else input.view()


def unsqueeze(input, dim):
    return np.expand_dims(input, dim % (input.ndim + 1))


def narrow(input, dim, start, length):
    d = dim % input.ndim
    start = start % input.shape[d] if start < 0 else start
    index = (slice(None),) * d + (slice(start, start + length),)
    return input[index]


def select(input, dim, index):
    d = dim % input.ndim
    return input[(slice(None),) * d + (index, Ellipsis)]


def unfold(input, dimension, size, step):
    if input.ndim == 0:
        return np.lib.stride_tricks.as_strided(input, shape=(size,), strides=(input.itemsize,), writeable=True) \
            if size == 1 else input.reshape(1)[:0]
    d = dimension % input.ndim
    shape = list(input.shape)
    strides = list(input.strides)
    count = (shape[d] - size) // step + 1
    shape[d], strides[d] = count, strides[d] * step
    return np.lib.stride_tricks.as_strided(input, shape=tuple(shape) + (size,),
                                           strides=tuple(strides) + (input.strides[d],), writeable=True)


def as_strided(input, size, stride, storage_offset):
    return _storage.as_strided(input, size, stride, storage_offset)


def basic_index(input, index):
    # The trailing Ellipsis keeps numpy from returning a scalar when every dim gets an int.
    return input[tuple(index) + (Ellipsis,)]


KERNELS: dict[str, Callable[..., Any]] = {
    "view": view, "transpose": transpose, "permute": permute, "t": t, "expand": expand, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "narrow": narrow, "select": select, "unfold": unfold, "as_strided": as_strided,
    "basic_index": basic_index,
}

"""Device memory, as this backend models it: every native array views a flat 1-D storage.

A view is (storage, shape, element strides, element offset), as in PyTorch; numpy builds it with
``np.ndarray(buffer=storage)``, so views of views keep finding their storage through ``.base``.
"""
from __future__ import annotations

import numpy as np


def root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def offset_of(a: np.ndarray) -> int:
    r = root(a)
    return (a.__array_interface__["data"][0] - r.__array_interface__["data"][0]) // a.itemsize


def strides_of(a: np.ndarray) -> tuple[int, ...]:
    """Element strides (numpy's are in bytes)."""
    return tuple(s // a.itemsize for s in a.strides)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def allocate(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    n = 1
    for s in shape:
        n *= s
    storage = np.empty(n, dtype)
    return strided(storage, shape, contiguous_strides(shape), 0)


def strided(a: np.ndarray, shape, strides, offset: int) -> np.ndarray:
    """The view of ``a``'s storage with element ``strides`` starting ``offset`` elements in."""
    r = root(a)
    item = a.itemsize
    offset = min(offset, r.size)  # an empty view may start past an empty storage's end
    return np.ndarray(tuple(shape), dtype=a.dtype, buffer=r, offset=offset * item,
                      strides=tuple(s * item for s in strides))

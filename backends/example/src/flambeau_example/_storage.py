"""Device memory, as this backend models it: every native array views a flat 1-D storage.

A view is (storage, shape, element strides, element offset), as in PyTorch; numpy builds it with
``np.ndarray(buffer=storage)``, so views of views keep finding their storage through ``.base``.
These functions are the :class:`flambeau.backend_kit.ArrayStorage` the kernels are built over.
"""
from __future__ import annotations

import numpy as np

from flambeau.backend_kit import contiguous_strides


def root(a: np.ndarray) -> np.ndarray:
    """The flat storage ``a`` views."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def offset_of(a: np.ndarray) -> int:
    r = root(a)
    return (a.__array_interface__["data"][0] - r.__array_interface__["data"][0]) // a.itemsize


def strides_of(a: np.ndarray) -> tuple[int, ...]:
    """Element strides (numpy's are in bytes)."""
    return tuple(s // a.itemsize for s in a.strides)


def allocate(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    n = 1
    for s in shape:
        n *= s
    storage = np.empty(n, dtype)
    return strided(storage, shape, contiguous_strides(shape), 0)


def strided(a: np.ndarray, shape, strides, offset: int, dtype=None) -> np.ndarray:
    """The view of ``a``'s storage with element ``strides`` starting ``offset`` elements in (elements of
    ``dtype``, default ``a``'s: view_as_real/view_as_complex reinterpret the same bytes)."""
    r = root(a)
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    item = dtype.itemsize
    offset = min(offset, r.nbytes // item)  # an empty view may start past an empty storage's end
    return np.ndarray(tuple(shape), dtype=dtype, buffer=r, offset=offset * item,
                      strides=tuple(s * item for s in strides))


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    return np.may_share_memory(a, b)


def storage_numel(a: np.ndarray) -> int:
    """How many elements of ``a``'s dtype its storage holds (a ``view_as_real`` view counts floats)."""
    return root(a).nbytes // a.itemsize

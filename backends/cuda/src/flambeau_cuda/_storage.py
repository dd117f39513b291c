"""Device memory as PyTorch models it: every native is a strided view of one allocation.

A native is a CuPy ``ndarray`` built as ``xp.ndarray(shape, dtype, memptr, strides)`` over the memory of
a flat allocation, so views of views keep finding their allocation through ``a.data.mem`` (CuPy's
``MemoryPointer`` keeps its ``Memory`` alive). Only CuPy's public array constructor and memory pointers
are used, so the test double in ``tests/_fake_cupy.py`` runs this module unchanged.

CuPy's memory pool rounds allocations up, so ``mem.size`` can exceed the storage: the size asked for
is recorded per allocation address (an address the pool hands out again is recorded again on reuse).
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from flambeau.backend_kit import contiguous_strides

_NBYTES: dict[int, int] = {}


def allocate(xp: ModuleType, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A new C-contiguous native of ``shape`` over a fresh allocation of exactly its size."""
    n = 1
    for s in shape:
        n *= s
    flat = xp.empty(n, dtype)
    _NBYTES[flat.data.mem.ptr] = n * flat.itemsize
    if tuple(shape) == (n,):
        return flat
    return xp.ndarray(tuple(shape), dtype, memptr=flat.data, strides=tuple(s * flat.itemsize
                                                                           for s in contiguous_strides(shape)))


def register(a: Any) -> Any:
    """Record the storage of an array made elsewhere (DLPack, CuPy's own results) as its whole allocation."""
    _NBYTES.setdefault(a.data.mem.ptr, a.data.mem.size)
    return a


def storage_nbytes(a: Any) -> int:
    mem = a.data.mem
    return _NBYTES.get(mem.ptr, mem.size)


def offset_of(a: Any) -> int:
    """The element offset of ``a``'s first element from its allocation's start."""
    return (a.data.ptr - a.data.mem.ptr) // a.itemsize if a.itemsize else 0


def strides_of(a: Any) -> tuple[int, ...]:
    """Element strides (CuPy's are in bytes)."""
    return tuple(s // a.itemsize for s in a.strides)


def strided(xp: ModuleType, a: Any, shape, strides, offset: int, dtype: Any = None) -> Any:
    """The view of ``a``'s allocation with element ``strides`` starting ``offset`` elements in
    (elements of ``dtype``, default ``a``'s: view_as_real/complex reinterpret the same bytes)."""
    dtype = np.dtype(dtype) if dtype is not None else a.dtype
    item = dtype.itemsize
    mem = a.data.mem
    offset = min(offset, storage_nbytes(a) // item) if item else 0  # an empty view may start past the end
    base = type(a.data)(mem, 0)
    return xp.ndarray(tuple(shape), dtype, memptr=base + offset * item, strides=tuple(s * item for s in strides))


class Storage:
    """This module's functions over one array module: the :class:`flambeau.backend_kit.ArrayStorage`
    the core tier's kernels are built over."""

    def __init__(self, xp: ModuleType) -> None:
        self.xp = xp

    offset_of = staticmethod(offset_of)
    strides_of = staticmethod(strides_of)

    def allocate(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return allocate(self.xp, shape, dtype)

    def strided(self, a: Any, shape, strides, offset: int, dtype: Any = None) -> Any:
        return strided(self.xp, a, shape, strides, offset, dtype)

    @staticmethod
    def shares_memory(a: Any, b: Any) -> bool:
        """Same allocation (conservative, as numpy's ``may_share_memory``): no device call."""
        return a.data.mem.ptr == b.data.mem.ptr

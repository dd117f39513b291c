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

_NBYTES: dict[int, int] = {}


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


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


def view_strides(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of ``new_shape`` viewing a tensor of ``shape``/``strides`` without a copy.

    numpy does the arithmetic on a host array of the same layout that owns no data (every stride
    applied to a one-element buffer with stride 0 where it would step outside): no device call.
    """
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), shape, tuple(8 * s for s in strides))
    result = probe.view()
    result.shape = new_shape  # the meta function checked that the view exists
    return tuple(s // 8 for s in result.strides)

"""Output sizes worked out from integer arguments before any work, with PyTorch's errors.

A size computed from user values (repeat counts, a triangle's rows and columns, bincount's largest
value) can exceed what int64 or memory holds. It is computed exactly (Python ints) and checked
here, before numpy or a kernel is asked to allocate or loop over it.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

_MAX_BYTES = 2 ** 63 - 1


def checked_nbytes(shape: Sequence[int], itemsize: int) -> int:
    """The bytes a tensor of ``shape`` takes; PyTorch's RuntimeError when that overflows int64."""
    nbytes = math.prod(shape) * itemsize
    if nbytes > _MAX_BYTES:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return nbytes


def checked_numel(shape: Sequence[int]) -> int:
    """The element count of ``shape``; PyTorch's RuntimeError when it overflows int64.

    Views can describe more elements than memory holds (``expand``, ``as_strided`` with zero
    strides), so a view's shape is checked here rather than by an allocator.
    """
    numel = math.prod(shape)
    if numel > _MAX_BYTES:
        raise RuntimeError("numel: integer multiplication overflow")
    return numel


def allocation_error(nbytes: int) -> RuntimeError:
    """The error PyTorch's CPU allocator raises when ``nbytes`` cannot be allocated."""
    return RuntimeError(f"DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes.")


def nonnegative_total(counts: np.ndarray) -> int:
    """The exact sum of non-negative int64 ``counts`` (numpy's int64 sum would wrap around)."""
    if counts.size == 0:
        return 0
    # numpy's float64 sum of non-negative terms is within a tiny relative error of the exact one: below
    # 2**62 the int64 sum cannot wrap, and above it only the exact (Python int) sum can say how large.
    approx = float(counts.sum(dtype=np.float64))
    if approx < 2.0 ** 62:
        return int(counts.sum(dtype=np.int64))
    return sum(int(c) for c in counts.tolist())

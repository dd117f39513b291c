"""Stride arithmetic in elements (numpy's and CuPy's strides are in bytes), done on the host."""
from __future__ import annotations

import numpy as np


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a C-contiguous array of ``shape`` (PyTorch's: a size-0 or size-1 dim
    steps as if it had one element)."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def view_strides(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of ``new_shape`` viewing an array of ``shape``/``strides`` without a copy.

    numpy does the arithmetic on a host array of that layout over a one-element buffer (its data is
    never read), so no device memory is touched. The caller has checked that the view exists (the
    op's meta function did); if it does not, numpy's ValueError says so.
    """
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), shape, tuple(8 * s for s in strides))
    return tuple(s // 8 for s in probe.reshape(new_shape, copy=False).strides)

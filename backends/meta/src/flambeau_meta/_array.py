"""The meta backend's native array: the metadata of an array, and never any elements."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

#: PyTorch's words when something tries to read a meta tensor's values.
NO_DATA = "Cannot copy out of meta tensor; no data!"


def contiguous_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Row-major strides in bytes (a dim of size 0 counts as 1, as PyTorch counts it)."""
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class MetaArray:
    """What flambeau's Tensor reads from a native array, with no storage behind it.

    Args:
        shape: the sizes.
        dtype: a numpy dtype (``flambeau.float32.numpy_dtype``...).
        strides: in bytes, as numpy's; row-major when None.
        offset: the first element's position in the (imaginary) storage, in elements.
        storage_size: how many elements the storage would hold; ``prod(shape)`` when None.
    """

    __slots__ = ("shape", "strides", "dtype", "offset", "storage_size")

    def __init__(self, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int] | None = None,
                 offset: int = 0, storage_size: int | None = None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = contiguous_strides(self.shape, self.dtype.itemsize) if strides is None else \
            tuple(int(s) for s in strides)
        self.offset = int(offset)
        self.storage_size = math.prod(self.shape) if storage_size is None else int(storage_size)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def element_strides(self) -> list[int]:
        return [s // self.dtype.itemsize for s in self.strides]

    def derive(self, shape: Sequence[int], element_strides: Sequence[int], offset: int) -> "MetaArray":
        """A view of the same (imaginary) storage: strides given in elements."""
        item = self.dtype.itemsize
        return MetaArray(shape, self.dtype, tuple(s * item for s in element_strides), offset, self.storage_size)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise NotImplementedError(NO_DATA)

    def __repr__(self) -> str:
        return (f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"offset={self.offset})")

"""Where a numpy view's memory begins and ends, for strides, offsets and ``as_strided``."""
from __future__ import annotations

import numpy as np


def root(array: np.ndarray) -> np.ndarray:
    """The outermost ndarray whose memory ``array`` views (itself when it owns its data)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def storage_offset(array: np.ndarray) -> int:
    """Elements between the start of the storage and ``array``'s first element."""
    return (_address(array) - _address(root(array))) // array.itemsize


def storage_numel(array: np.ndarray) -> int:
    """How many elements of ``array``'s dtype the storage holds."""
    return root(array).nbytes // array.itemsize


def flat_storage(array: np.ndarray) -> np.ndarray:
    """The whole storage under ``array`` as a 1-D array of its dtype, writes shared."""
    base = root(array)
    if not (base.flags.c_contiguous or base.flags.f_contiguous):
        raise RuntimeError("as_strided: the storage under this tensor is not contiguous")
    raw = base.reshape(-1, order="A").view(np.uint8)
    return raw[: (raw.size // array.itemsize) * array.itemsize].view(array.dtype)


def as_strided(array: np.ndarray, size, stride, storage_offset_: int | None) -> np.ndarray:
    """A view of ``array``'s storage with element strides, bounds already checked by the meta function."""
    base = root(array)
    offset = storage_offset(array) if storage_offset_ is None else storage_offset_
    item = array.itemsize
    if not (base.flags.c_contiguous or base.flags.f_contiguous):
        raise RuntimeError("as_strided: the storage under this tensor is not contiguous")
    # An ndarray over the root's buffer keeps ``base`` pointing at the root, so that offsets and
    # later views still find the storage (stride_tricks.as_strided would hide it behind a DummyArray).
    return np.ndarray(tuple(size), dtype=array.dtype, buffer=base, offset=offset * item,
                      strides=tuple(s * item for s in stride))


def contiguous_element_strides(shape) -> tuple:
    """PyTorch's row-major strides, in elements: a dim of size 0 counts as 1."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def with_empty_strides(array: np.ndarray) -> np.ndarray:
    """An empty array with PyTorch's strides. numpy gives a fresh empty array all-zero strides
    (``np.empty((0, 3))``), which its views then carry (``.T`` would read (0, 0) where PyTorch has
    (1, 3)); the view kernels start from this instead, and numpy keeps non-zero strides through
    its views of an empty array."""
    if array.size or any(array.strides) or not array.ndim:
        return array
    item = array.itemsize
    return np.ndarray(array.shape, dtype=array.dtype, buffer=root(array), offset=storage_offset(array) * item,
                      strides=tuple(s * item for s in contiguous_element_strides(array.shape)))

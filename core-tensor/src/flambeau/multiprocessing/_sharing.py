"""Moving a CPU tensor's storage into shared memory (``Tensor.share_memory_``), and rebuilding a
tensor onto a segment another process shared."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _segments

if TYPE_CHECKING:
    from .._tensor import Tensor


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def check_shareable(t: "Tensor", what: str) -> None:
    """Refuse, with PyTorch-style words, a tensor whose memory cannot be placed in shared memory."""
    if t._device.type != "cpu" or not isinstance(t._data, np.ndarray):
        raise RuntimeError(
            f"{what}: only cpu tensors can be placed in shared memory, got a tensor on {t._device.type!r}; "
            "move it with .cpu() first (flambeau has no inter-process sharing for device memory)"
        )


def is_shared(t: "Tensor") -> bool:
    """Whether ``t``'s storage lives in a shared-memory segment."""
    return isinstance(t._data, np.ndarray) and _segments.segment_of(t._data) is not None


def share_(t: "Tensor") -> "Tensor":
    """Move ``t``'s storage into shared memory, in place (a no-op if it is there already).

    The whole storage moves, as in PyTorch, and ``t`` keeps its offset and strides. ``t`` and the
    tensors it is a view of (its ``_base``) are rebound to the shared copy; other views of the old
    storage taken earlier keep the old, private memory (flambeau's tensors hold numpy arrays, which
    cannot be re-pointed), so share a tensor before taking views of it.
    """
    check_shareable(t, "share_memory_")
    data = t._data
    if _segments.segment_of(data) is not None:
        return t
    root = _root(data)
    if root.nbytes == 0:
        return t  # nothing to share: an empty tensor rebuilds from its sizes alone
    if root.flags.c_contiguous or root.flags.f_contiguous:
        # Copy the storage's bytes in memory order, so that every view's byte offset still holds.
        seg = _segments.new_segment(root.nbytes)
        raw = seg.array()
        raw[...] = root.reshape(-1, order="A").view(np.uint8)
        group = [t]
        base = t._base
        while base is not None and isinstance(base._data, np.ndarray) and _root(base._data) is root:
            group.append(base)
            base = base._base
        old = _address(root)
        for tensor in group:
            native = tensor._data
            tensor._data = np.ndarray(native.shape, dtype=native.dtype, buffer=raw,
                                      offset=_address(native) - old, strides=native.strides)
        return t
    # A storage numpy cannot flatten (a from_numpy'd strided view): share this tensor's values.
    seg = _segments.new_segment(data.nbytes)
    native = np.ndarray(data.shape, dtype=data.dtype, buffer=seg.array())
    np.copyto(native, data)
    t._data = native
    return t


def rebuild(seg: _segments.Segment, dtype_name: str, shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """A numpy view of a received segment, its extent checked against the segment first."""
    from .. import _dtypes

    np_dtype = _dtypes._BY_NAME[dtype_name].numpy_dtype
    if len(shape) != len(strides) or any(s < 0 for s in shape) or any(s < 0 for s in strides) or offset < 0:
        raise RuntimeError(f"invalid shared tensor layout: sizes {shape}, strides {strides}, offset {offset}")
    end = offset + (sum((n - 1) * s for n, s in zip(shape, strides)) + np_dtype.itemsize if all(shape) else 0)
    if end > seg.nbytes:
        raise RuntimeError(f"shared tensor needs {end} bytes but its segment holds {seg.nbytes}")
    return np.ndarray(tuple(shape), dtype=np_dtype, buffer=seg.array(), offset=offset, strides=tuple(strides))

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
        share_together([t])
        return t
    # A storage numpy cannot flatten (a from_numpy'd strided view): share this tensor's values.
    seg = _segments.new_segment(data.nbytes)
    native = np.ndarray(data.shape, dtype=data.dtype, buffer=seg.array())
    np.copyto(native, data)
    t._data = native
    return t


def share_together(tensors: list["Tensor"]) -> None:
    """Move the storages of ``tensors`` (CPU tensors not shared yet) into one new segment, each
    storage at its own 64-byte aligned place: one segment, so one handle, for a whole batch."""
    groups: dict[int, tuple[np.ndarray, list["Tensor"]]] = {}
    for t in tensors:
        root = _root(t._data)
        if root.nbytes and (root.flags.c_contiguous or root.flags.f_contiguous):
            groups.setdefault(id(root), (root, []))[1].append(t)
    if not groups:
        return
    places, total = [], 0
    for root, _ in groups.values():
        places.append(total)
        total += -(-root.nbytes // 64) * 64
    seg = _segments.new_segment(total)
    for start, (root, members) in zip(places, groups.values()):
        new_root = seg.array(start, root.nbytes)
        new_root[...] = root.reshape(-1, order="A").view(np.uint8)
        _rebind(members, root, new_root)


def _rebind(members: list["Tensor"], root: np.ndarray, new_root: np.ndarray) -> None:
    """Point ``members`` (and the tensors they are views of) at ``new_root``, a copy of ``root``."""
    group: dict[int, "Tensor"] = {}  # by id: a batch may hold a tensor and a view of it
    for t in members:
        while t is not None and isinstance(t._data, np.ndarray) and _root(t._data) is root:
            group[id(t)] = t
            t = t._base
    old = _address(root)
    for tensor in group.values():
        native = tensor._data
        tensor._data = np.ndarray(native.shape, dtype=native.dtype, buffer=new_root,
                                  offset=_address(native) - old, strides=native.strides)


def storage_place(data: np.ndarray, seg: _segments.Segment) -> tuple[int, int, int]:
    """Where ``data``'s storage lies in ``seg`` (start and size, in bytes) and ``data``'s byte offset in it."""
    root = _root(data)
    start = _address(root) - _address(seg.array(0, 1))
    return start, root.nbytes, _address(data) - _address(root)


def rebuild(seg: _segments.Segment, start: int, nbytes: int, dtype_name: str, shape: tuple, strides: tuple,
            offset: int) -> np.ndarray:
    """A numpy view onto the storage at ``start`` (``nbytes`` long) in a received segment, its extent
    checked against the storage and the segment first."""
    from .. import _dtypes

    np_dtype = _dtypes._BY_NAME[dtype_name].numpy_dtype
    if len(shape) != len(strides) or any(s < 0 for s in shape) or any(s < 0 for s in strides) or offset < 0:
        raise RuntimeError(f"invalid shared tensor layout: sizes {shape}, strides {strides}, offset {offset}")
    if start < 0 or nbytes < 0 or start + nbytes > seg.nbytes:
        raise RuntimeError(f"shared storage of {nbytes} bytes at {start} lies outside its segment of {seg.nbytes}")
    end = offset + (sum((n - 1) * s for n, s in zip(shape, strides)) + np_dtype.itemsize if all(shape) else 0)
    if end > nbytes:
        raise RuntimeError(f"shared tensor needs {end} bytes but its storage holds {nbytes}")
    return np.ndarray(tuple(shape), dtype=np_dtype, buffer=seg.array(start, nbytes), offset=offset,
                      strides=tuple(strides))

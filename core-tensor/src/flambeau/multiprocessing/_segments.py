"""Shared-memory segments: the memory under shared CPU tensors, and how other processes find it.

A CPU tensor's storage is a numpy array. Sharing it means copying that array's bytes, once, into a
segment of shared memory and rebuilding the tensor as a view onto the segment; a process that
receives the tensor maps the same segment, so writes on either side are seen by the other.

A segment is a :class:`Segment`, an ``mmap.mmap`` subclass, so the numpy arrays built on it
(``np.frombuffer``) keep it alive and ``array.base`` tells whether a storage is shared. Two sharing
strategies, as ``torch.multiprocessing``:

- ``file_descriptor`` (default): an anonymous ``memfd``; it has no name, so nothing can be left
  behind in ``/dev/shm``. Its descriptor travels through ``multiprocessing``'s descriptor passing;
  the memory is freed by the kernel when the last mapping and descriptor are gone.
- ``file_system``: a named file in ``/dev/shm`` with a reference count in its first bytes (under
  ``flock``). Every process mapping it holds one reference, and every pickled message one until it
  is unpickled; whoever drops the last reference unlinks the file. Names are also registered with
  ``multiprocessing``'s resource tracker, which unlinks any that a crashed process leaves when the
  whole process tree has ended.

A mapped segment holds open descriptors until the last tensor over it is gone (Python's ``mmap``
keeps one; ``file_descriptor`` keeps a second to send the segment on): raise ``ulimit -n`` for
very many live shared storages.
"""
from __future__ import annotations

import fcntl
import itertools
import mmap
import os
import secrets
import struct
import threading
import weakref
from typing import Any

import numpy as np

__all__ = ["Segment", "new_segment", "segment_of", "open_fd", "open_name"]

_SHM_DIR = "/dev/shm"
# file_system segments start with an 8-byte reference count, padded so that the data after it is
# aligned for every dtype (and for SIMD loads).
_HEADER = 64
_COUNT = struct.Struct("<q")
_counter = itertools.count()
_lock = threading.Lock()
#: The strategy new segments use (``flambeau.multiprocessing.set_sharing_strategy`` changes it).
STRATEGY = ["file_descriptor"]
ALL_STRATEGIES = frozenset({"file_descriptor", "file_system"})
#: Segments this process has mapped, by (device, inode) or name: a tensor received twice maps once.
_open: "weakref.WeakValueDictionary[Any, Segment]" = weakref.WeakValueDictionary()


class Segment(mmap.mmap):
    """A mapped shared-memory segment; its data is ``memoryview(seg)[seg.data_offset:]``.

    Attributes set by the constructors below: ``strategy`` ("file_descriptor" or "file_system"),
    ``fd`` (the memfd, file_descriptor only), ``name`` (file_system only), ``nbytes`` (data size).
    """

    strategy: str
    pid: int
    fd: int
    name: str
    nbytes: int
    data_offset: int
    key: Any

    def array(self, start: int = 0, count: int | None = None) -> np.ndarray:
        """``count`` bytes of the segment's data from ``start`` (all of it by default) as a 1-D uint8
        array whose ``base`` is (a memoryview of) this segment: a storage root of its own."""
        count = self.nbytes - start if count is None else count
        return np.frombuffer(self, dtype=np.uint8, count=count, offset=self.data_offset + start)

    def __del__(self) -> None:
        # Runs when the last array over the segment is gone (numpy holds the mmap, not a copy).
        strategy = getattr(self, "strategy", None)
        if strategy == "file_descriptor":
            try:
                os.close(self.fd)
            except OSError:
                pass
        elif strategy == "file_system" and self.pid == os.getpid():
            # A forked child inherits the parent's mappings but not its references: only the
            # process that took the reference gives it back.
            _release_name(self.name)


def segment_of(array: np.ndarray) -> Segment | None:
    """The segment under ``array``, or None when its memory is private to this process."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    base = array.base
    if isinstance(base, memoryview):  # numpy 2 keeps the buffer it was given as a memoryview of it
        base = base.obj
    return base if isinstance(base, Segment) else None


# -- file_descriptor -------------------------------------------------------------------------------
def _new_fd_segment(nbytes: int) -> Segment:
    fd = os.memfd_create(f"flambeau_{os.getpid()}", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return _map_fd(fd, nbytes)


def _map_fd(fd: int, nbytes: int) -> Segment:
    try:
        seg = Segment(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    # Kept open for sending the segment on (mmap's own copy of the descriptor is not reachable).
    seg.strategy, seg.fd, seg.nbytes, seg.data_offset = "file_descriptor", fd, nbytes, 0
    seg.pid = os.getpid()
    seg.key = (st.st_dev, st.st_ino)
    with _lock:
        _open[seg.key] = seg
    return seg


def open_fd(fd: int, nbytes: int) -> Segment:
    """Map a received memfd (this process now owns ``fd``); reuse a mapping of the same segment."""
    st = os.fstat(fd)
    with _lock:
        seg = _open.get((st.st_dev, st.st_ino))
    if seg is not None:
        os.close(fd)
        return seg
    if st.st_size < nbytes:
        os.close(fd)
        raise RuntimeError(f"shared memory segment holds {st.st_size} bytes, expected at least {nbytes}")
    return _map_fd(fd, nbytes)


# -- file_system -----------------------------------------------------------------------------------
def _path(name: str) -> str:
    return os.path.join(_SHM_DIR, name)


def _add_ref(fd: int, delta: int) -> int:
    """Add ``delta`` to the reference count at the start of the file ``fd``; the new count."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        count = _COUNT.unpack(os.pread(fd, _COUNT.size, 0))[0] + delta
        os.pwrite(fd, _COUNT.pack(count), 0)
        return count
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _new_name_segment(nbytes: int) -> Segment:
    name = f"flambeau_{os.getpid()}_{next(_counter)}_{secrets.token_hex(4)}"
    fd = os.open(_path(name), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, _HEADER + nbytes)
        os.pwrite(fd, _COUNT.pack(1), 0)  # this process's reference
        _track(name)
        return _map_name(fd, name, nbytes)
    except BaseException:
        os.unlink(_path(name))
        raise
    finally:
        os.close(fd)


def _map_name(fd: int, name: str, nbytes: int) -> Segment:
    seg = Segment(fd, _HEADER + nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    seg.strategy, seg.name, seg.nbytes, seg.data_offset, seg.key = "file_system", name, nbytes, _HEADER, name
    seg.pid = os.getpid()
    with _lock:
        _open[name] = seg
    return seg


def add_message_ref(seg: Segment) -> None:
    """Count a pickled message as a holder of ``seg`` until it is unpickled (file_system)."""
    fd = os.open(_path(seg.name), os.O_RDWR)
    try:
        _add_ref(fd, 1)
    finally:
        os.close(fd)


def open_name(name: str, nbytes: int) -> Segment:
    """Map the named segment a message carried, taking over that message's reference."""
    if "/" in name or not name.startswith("flambeau_"):
        raise RuntimeError(f"not a flambeau shared memory segment: {name!r}")
    with _lock:
        seg = _open.get(name)
    if seg is not None and seg.pid == os.getpid():  # mapped already, with a reference: drop the message's
        _release_name(name)
        return seg
    # (A mapping inherited through fork holds no reference and may live as long as the child: map
    # anew, so that the message's reference goes with the tensors rebuilt from it.)
    try:
        fd = os.open(_path(name), os.O_RDWR)
    except FileNotFoundError:
        raise RuntimeError(f"shared memory segment {name!r} no longer exists: the process that sent the tensor "
                           "freed it before it was received") from None
    try:
        if os.fstat(fd).st_size < _HEADER + nbytes:
            raise RuntimeError(f"shared memory segment {name!r} is smaller than the tensor it should hold")
        return _map_name(fd, name, nbytes)
    finally:
        os.close(fd)


def _release_name(name: str) -> None:
    try:
        fd = os.open(_path(name), os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        if _add_ref(fd, -1) <= 0:
            try:
                os.unlink(_path(name))
            except FileNotFoundError:
                pass
            _untrack(name)
    finally:
        os.close(fd)


def _track(name: str) -> None:
    from multiprocessing import resource_tracker

    resource_tracker.register("/" + name, "shared_memory")


def _untrack(name: str) -> None:
    from multiprocessing import resource_tracker

    try:
        resource_tracker.unregister("/" + name, "shared_memory")
    except Exception:  # the tracker is gone (interpreter shutdown): the file is unlinked already
        pass


# -- both ------------------------------------------------------------------------------------------
def new_segment(nbytes: int, strategy: str | None = None) -> Segment:
    """A new zero-filled segment of ``nbytes`` (> 0) bytes (the current sharing strategy by default)."""
    if (strategy or STRATEGY[0]) == "file_descriptor":
        return _new_fd_segment(nbytes)
    return _new_name_segment(nbytes)

"""How tensors cross process boundaries: ``ForkingPickler`` reducers that send a shared-memory handle.

``multiprocessing`` pickles everything it sends (queues, pipes, a spawned process's arguments) with
``multiprocessing.reduction.ForkingPickler``. The reducers registered here move a CPU tensor's
storage into shared memory (once; it stays there) and send only a handle to it with the tensor's
dtype, sizes, strides and offset; the receiver maps the same memory, so the tensor is not copied
and writes on either side are seen by the other. ``requires_grad`` travels; ``.grad`` does not (as in
PyTorch). Ordinary pickling (``pickle.dumps``, ``flambeau.save``) is unaffected: it copies values.
"""
from __future__ import annotations

import pickle
import threading
from multiprocessing import reduction
from typing import Any

import numpy as np

from .. import _dtypes
from .._device import device as _device
from .._tensor import Tensor, wrap
from . import _segments, _sharing

__all__ = ["dumps", "init_reductions", "reduce_tensor", "rebuild_tensor"]

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
             "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
             "before serializing (e.g., putting it on the queue).")


def _layout(t: Tensor) -> tuple[str, tuple, tuple, bool, bool]:
    return t._dtype.name, tuple(t._data.shape), tuple(t._data.strides), t._requires_grad, t._conj


class _FdHandle:
    """A memfd in flight. A message carries one per segment however many of its tensors use it
    (pickle's memo), and the receiver maps it once."""

    def __init__(self, seg: _segments.Segment) -> None:
        self.dupfd = reduction.DupFd(seg.fd)
        self.nbytes = seg.nbytes

    def open(self) -> _segments.Segment:
        seg = self.__dict__.get("_seg")
        if seg is None:
            try:
                fd = self.dupfd.detach()
            except OSError as exc:
                raise RuntimeError("could not receive a shared tensor: the process that sent it has exited (keep "
                                   "the sender alive until the tensor is received, or use the file_system "
                                   "sharing strategy)") from exc
            seg = self._seg = _segments.open_fd(fd, self.nbytes)
        return seg

    def __getstate__(self) -> dict:
        return {"dupfd": self.dupfd, "nbytes": self.nbytes}


class _NameHandle:
    """A file_system segment in flight, holding one reference until the receiver maps it."""

    def __init__(self, seg: _segments.Segment) -> None:
        _segments.add_message_ref(seg)
        self.name = seg.name
        self.nbytes = seg.nbytes

    def open(self) -> _segments.Segment:
        seg = self.__dict__.get("_seg")
        if seg is None:
            seg = self._seg = _segments.open_name(self.name, self.nbytes)
        return seg

    def __getstate__(self) -> dict:
        return {"name": self.name, "nbytes": self.nbytes}


class _Scope(threading.local):
    #: The handles of the message being pickled by :func:`dumps`, by segment (None outside it).
    handles: dict | None = None


_scope = _Scope()


def _handle(seg: _segments.Segment) -> Any:
    handles = _scope.handles
    if handles is not None and id(seg) in handles:
        return handles[id(seg)][1]
    handle = _FdHandle(seg) if seg.strategy == "file_descriptor" else _NameHandle(seg)
    if handles is not None:
        handles[id(seg)] = (seg, handle)  # the segment kept alive so that its id is not reused meanwhile
    return handle


def reduce_tensor(t: Tensor) -> tuple:
    """The reducer for CPU tensors: share the storage (in place), send its handle and the layout."""
    if t._requires_grad and t.grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    _sharing.check_shareable(t, "sending a tensor to another process")
    _sharing.share_(t)
    data = t._data
    seg = _segments.segment_of(data)
    if seg is None:  # an empty storage: the layout is all there is to send
        return rebuild_empty, _layout(t)
    return rebuild_tensor, (_handle(seg),) + _sharing.storage_place(data, seg) + _layout(t)


def rebuild_tensor(handle: Any, start: int, nbytes: int, offset: int, dtype_name: str, shape: tuple, strides: tuple,
                   requires_grad: bool, conj: bool) -> Tensor:
    """Rebuild a tensor another process sent, as a view onto the memory it shared."""
    native = _sharing.rebuild(handle.open(), start, nbytes, dtype_name, shape, strides, offset)
    return _finish(native, dtype_name, requires_grad, conj)


def _tensors_in(obj: Any, out: list, depth: int = 0) -> list:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif depth < 8 and isinstance(obj, (list, tuple)):
        for item in obj:
            _tensors_in(item, out, depth + 1)
    elif depth < 8 and isinstance(obj, dict):
        for item in obj.values():
            _tensors_in(item, out, depth + 1)
    return out


def dumps(obj: Any, protocol: int = pickle.HIGHEST_PROTOCOL) -> bytes:
    """``ForkingPickler.dumps(obj)`` for one message with many tensors (a DataLoader batch): the
    storages not shared yet go into one segment together, and each segment travels with one handle,
    so that the receiver maps it once instead of once per tensor."""
    fresh = [t for t in _tensors_in(obj, []) if t._device.type == "cpu" and isinstance(t._data, np.ndarray)
             and not (t._requires_grad and t.grad_fn is not None) and _segments.segment_of(t._data) is None]
    if fresh:
        _sharing.share_together(fresh)
    _scope.handles = {}
    try:
        return bytes(reduction.ForkingPickler.dumps(obj, protocol))
    finally:
        _scope.handles = None


def _finish(native: np.ndarray, dtype_name: str, requires_grad: bool, conj: bool) -> Tensor:
    t = wrap(native, _dtypes._BY_NAME[dtype_name], _device("cpu"))
    t._conj = conj
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_empty(dtype_name: str, shape: tuple, strides: tuple, requires_grad: bool, conj: bool) -> Tensor:
    """Rebuild a tensor whose storage is empty (nothing to share)."""
    np_dtype = _dtypes._BY_NAME[dtype_name].numpy_dtype
    if any(s < 0 for s in shape) or all(shape):
        raise RuntimeError(f"invalid empty shared tensor: sizes {shape}")
    return _finish(np.empty(tuple(shape), dtype=np_dtype), dtype_name, requires_grad, conj)


def reduce_subclass(t: Tensor) -> Any:
    """Tensor subclasses (``nn.Parameter``...): share in place, then reduce as the class itself does
    (its ``__reduce_ex__`` pickles a plain tensor of the same storage, which :func:`reduce_tensor` sends)."""
    if type(t).__reduce_ex__ is Tensor.__reduce_ex__:
        return reduce_tensor(t)
    if t._device.type == "cpu" and isinstance(t._data, np.ndarray) and not (t._requires_grad and t.grad_fn):
        _sharing.share_(t)
    return t.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


def _register(cls: type) -> None:
    reduction.ForkingPickler.register(cls, reduce_tensor if cls is Tensor else reduce_subclass)


_initialized = False


def init_reductions() -> None:
    """Register the reducers with ``multiprocessing``'s pickler (``flambeau.multiprocessing`` does it on import)."""
    global _initialized
    if _initialized:
        return
    _initialized = True
    from .. import _tensor

    stack = [Tensor]
    while stack:  # Tensor and every subclass defined so far; later ones register as they are defined
        cls = stack.pop()
        _register(cls)
        stack.extend(cls.__subclasses__())
    _tensor.SUBCLASS_HOOKS.append(_register)

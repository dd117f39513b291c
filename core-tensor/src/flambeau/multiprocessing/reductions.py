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
from multiprocessing import reduction
from typing import Any

import numpy as np

from .. import _dtypes
from .._device import device as _device
from .._tensor import Tensor, wrap
from . import _segments, _sharing

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
             "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
             "before serializing (e.g., putting it on the queue).")


def _layout(t: Tensor) -> tuple[str, tuple, tuple, bool, bool]:
    return t._dtype.name, tuple(t._data.shape), tuple(t._data.strides), t._requires_grad, t._conj


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
    offset = data.__array_interface__["data"][0] - _address_of_segment(seg)
    if seg.strategy == "file_descriptor":
        handle: tuple = ("fd", reduction.DupFd(seg.fd), seg.nbytes)
    else:
        _segments.add_message_ref(seg)
        handle = ("name", seg.name, seg.nbytes)
    return rebuild_tensor, (handle, offset) + _layout(t)


def _address_of_segment(seg: _segments.Segment) -> int:
    return seg.array().__array_interface__["data"][0]


def _finish(native: np.ndarray, dtype_name: str, requires_grad: bool, conj: bool) -> Tensor:
    t = wrap(native, _dtypes._BY_NAME[dtype_name], _device("cpu"))
    t._conj = conj
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor(handle: tuple, offset: int, dtype_name: str, shape: tuple, strides: tuple, requires_grad: bool,
                   conj: bool) -> Tensor:
    """Rebuild a tensor another process sent, as a view onto the memory it shared."""
    kind, where, nbytes = handle
    seg = _segments.open_fd(where.detach(), nbytes) if kind == "fd" else _segments.open_name(where, nbytes)
    return _finish(_sharing.rebuild(seg, dtype_name, shape, strides, offset), dtype_name, requires_grad, conj)


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

"""What core-autograd adds to ``Tensor`` and to ``flambeau`` when it loads."""
from __future__ import annotations

import warnings
import weakref
from typing import Any, Callable

import flambeau
from flambeau._tensor import Tensor

from ._node import RemovableHandle, accumulator, add_hook, meta_of, output_nr

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead."
)


def _get_grad(self: Tensor) -> Any:
    g = self._grad
    if g is None and self.grad_fn is not None and not _retains(self):
        warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
    return g


def _set_grad(self: Tensor, value: Any) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value._dtype is not self._dtype:
            raise RuntimeError("assigned grad has data of a different type")
        if value._device != self._device:
            raise RuntimeError("assigned grad has data located on a different device")
        if tuple(value.shape) != tuple(self.shape):
            raise RuntimeError("assigned grad has data of a different size")
    self._grad = value


def _retains(t: Tensor) -> bool:
    m = t._autograd
    return m is not None and m.retains_grad


def retain_grad(self: Tensor) -> None:
    """Make this non-leaf tensor keep its gradient in ``.grad`` during backward (no-op on leaves)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return
    meta = meta_of(self)
    if meta.retains_grad:
        return
    meta.retains_grad = True
    node = self.grad_fn
    if node._retained is None:
        node._retained = {}
    node._retained[output_nr(self)] = weakref.ref(self)


def register_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """Register ``hook(grad) -> Tensor or None``, called with this tensor's gradient during backward.

    Returning a tensor replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

    Example::

        >>> x = flambeau.tensor([1., 2.], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward(); x.grad
        tensor([2., 2.])
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        return add_hook(meta_of(self).hooks, hook)
    return self.grad_fn._register_tensor_hook(output_nr(self), hook)


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]) -> RemovableHandle:
    """Register ``hook(tensor)``, called on a leaf after its ``.grad`` was accumulated."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return add_hook(meta_of(self).post_hooks, hook)


def _retains_grad(self: Tensor) -> bool:
    return self.grad_fn is not None and _retains(self)


def _output_nr(self: Tensor) -> int:
    return output_nr(self)


def _grad_accumulator(self: Tensor) -> Any:
    if self.grad_fn is not None or not self._requires_grad:
        return None
    return accumulator(self)


_core_detach = Tensor.detach


def detach(self: Tensor) -> Tensor:
    """A new tensor sharing this one's data and version counter, outside the autograd graph.

    As in PyTorch it is a view for storage purposes only: an in-place op on it (a leaf that
    requires grad after ``requires_grad_()``) is refused like on any leaf, and never rewrites
    the history of the tensor it was detached from.
    """
    out = _core_detach(self)
    if out._base is not None:
        meta_of(out).diff_base = None
    return out


def install() -> None:
    """Attach the autograd-only Tensor API and put anomaly detection on ``flambeau`` (the grad modes
    are core-tensor's own)."""
    from . import grad_mode
    from .anomaly_mode import detect_anomaly, set_detect_anomaly

    Tensor.grad = property(_get_grad, _set_grad, doc="The gradient accumulated by backward (leaves), or None.")
    Tensor.retain_grad = retain_grad
    Tensor.retains_grad = property(_retains_grad)
    Tensor.register_hook = register_hook
    Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
    Tensor.output_nr = property(_output_nr)
    Tensor._grad_accumulator = _grad_accumulator
    Tensor.detach = detach
    flambeau.set_anomaly_enabled = set_detect_anomaly
    flambeau.is_anomaly_enabled = lambda: grad_mode.ANOMALY[0]
    flambeau.detect_anomaly = detect_anomaly

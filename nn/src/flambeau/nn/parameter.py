"""``Parameter``, ``Buffer`` and the uninitialised parameters of lazy modules (torch.nn.parameter's API)."""
from __future__ import annotations

from typing import Any

import flambeau
from flambeau import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _share(target: Tensor, data: Tensor) -> None:
    """Point ``target``'s slots at ``data``'s storage, as ``data.detach()`` would (no autograd history)."""
    target._data = data._data
    target._dtype = data._dtype
    target._device = data._device
    target._version_counter = data._version_counter
    target._base = data._base
    target._requires_grad = False
    target._grad = None
    target.grad_fn = None
    target._autograd = None
    target._conj = data._conj


class Parameter(Tensor):
    r"""A tensor that is a module parameter.

    Assigning a ``Parameter`` as a :class:`Module` attribute registers it in the module's
    :meth:`~Module.parameters`. It shares ``data``'s storage and is a leaf that requires grad by default.

    Args:
        data (Tensor): the parameter's values (default: an empty tensor).
        requires_grad (bool): whether the parameter requires gradient (default: ``True``).
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = flambeau.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        self = object.__new__(cls)
        _share(self, data)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor has no __init__ of its own)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self.grad is not None:
            result.grad = self.grad.clone()
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (type(self), self.detach(), self.requires_grad, dict(self.__dict__)))


def _rebuild_parameter(cls: type, data: Tensor, requires_grad: bool, state: dict) -> Parameter:
    param = cls(data, requires_grad)
    param.__dict__.update(state)
    return param


class Buffer(Tensor):
    r"""A tensor that is a module buffer: assigning a ``Buffer`` as a :class:`Module` attribute registers it
    as a buffer, persistent (in the ``state_dict``) unless ``persistent=False``.

    Args:
        data (Tensor): the buffer's values (default: an empty tensor).
        persistent (bool): whether the buffer is part of the module's ``state_dict`` (default: ``True``).
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> "Buffer":
        if data is None:
            data = flambeau.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        self = object.__new__(cls)
        _share(self, data)
        self.persistent = persistent
        return self

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


class _Uninitialized:
    """Mixin of the lazy modules' placeholders: no shape until ``materialize``, then the real class."""

    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        r"""Create this placeholder's storage (uninitialised values) of ``shape`` and turn it into a
        :class:`Parameter` (or a plain tensor for a buffer)."""
        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        data = flambeau.empty(tuple(shape) if not isinstance(shape, int) else (shape,), device=device, dtype=dtype)
        requires_grad = self._requires_grad
        _share(self, data)
        self.__class__ = self.cls_to_become
        if requires_grad:
            self.requires_grad_(True)

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def numel(self) -> int:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: int) -> Any:
        raise RuntimeError(f"'{type(self).__name__}' and deep copies are not supported yet")

    def __deepcopy__(self, memo: dict) -> Any:
        result = type(self)(self.requires_grad, device=self._device, dtype=self._dtype)
        memo[id(self)] = result
        return result


class UninitializedParameter(_Uninitialized, Parameter):
    r"""A parameter whose shape is not known yet (lazy modules such as :class:`LazyLinear`); the first
    forward call materialises it into a :class:`Parameter`."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> "UninitializedParameter":
        return Parameter.__new__(cls, flambeau.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass


class UninitializedBuffer(_Uninitialized, Buffer):
    r"""A buffer whose shape is not known yet (lazy modules); the first forward call materialises it."""

    cls_to_become = Buffer

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> "UninitializedBuffer":
        self = object.__new__(cls)
        _share(self, flambeau.empty(0, device=device, dtype=dtype))
        self.persistent = True
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialised placeholder of a lazy module."""
    return isinstance(param, _Uninitialized)

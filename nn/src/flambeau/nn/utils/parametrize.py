"""Parametrizations: a module's tensor computed from an unconstrained original (torch.nn.utils.parametrize).

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that returns
``P()(original)`` (several parametrizations chain). The module's class is swapped for a subclass
that holds these properties, so that other instances of the class are untouched.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import flambeau
from flambeau import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    r"""Inside this context each parametrized tensor is computed once and reused (until the context ends)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    r"""The parametrizations of one tensor, applied in order to ``original``; ``right_inverse`` maps a
    value back to an original (the first parametrization's ``right_inverse`` when it has one)."""

    original: Tensor
    unsafe: bool

    def __init__(self, modules: list[Module], original: Tensor, unsafe: bool = False) -> None:
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with flambeau.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            if not unsafe:
                if new.dtype != original.dtype:
                    raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                     f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
                if new.shape != original.shape:
                    raise ValueError("When `right_inverse` outputs one tensor, it may not change the shape.\n"
                                     f"original.shape: {original.shape}\nright_inverse(original).shape: {new.shape}")
            with flambeau.no_grad():
                if new is not original:
                    original.data = new.data
            self._register_original("original", original, original)
            self.ntensors = 1
        else:
            if not isinstance(new, (list, tuple)) or not all(isinstance(t, Tensor) for t in new):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                 f"Got {type(new).__name__}")
            self.ntensors = len(new)
            for i, t in enumerate(new):
                self._register_original(f"original{i}", t.detach(), original)

    def _register_original(self, name: str, value: Tensor, like: Tensor) -> None:
        if isinstance(like, Parameter):
            self.register_parameter(name, value if isinstance(value, Parameter) else
                                    Parameter(value, like.requires_grad))
        else:
            self.register_buffer(name, value)

    def right_inverse(self, value: Tensor) -> None:
        r"""Set ``original`` so that the parametrized tensor becomes ``value`` (through the right inverses)."""
        with flambeau.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       "right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                targets, values = [self.original], [value]
            else:
                if not isinstance(value, (list, tuple)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of {self.ntensors} tensors. "
                                     f"Got {type(value).__name__}")
                targets = [getattr(self, f"original{i}") for i in range(self.ntensors)]
                values = list(value)
            for target, v in zip(targets, values):
                if v.dtype != target.dtype or v.shape != target.shape:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {v.dtype} and shape "
                                     f"{tuple(v.shape)} while the original has dtype {target.dtype} and "
                                     f"shape {tuple(target.shape)}")
                target.copy_(v)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _make_property(name: str) -> property:
    def get(self: Module) -> Tensor:
        parametrization = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            value = _cache.get(key)
            if value is None:
                value = _cache[key] = parametrization()
            return value
        return parametrization()

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, set_)


def _inject_new_class(module: Module) -> None:
    """Give ``module`` its own subclass, ``Parametrized<Class>``, to carry the properties."""
    cls = module.__class__

    def getstate(self: Module) -> Any:
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict().")

    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})
    param_cls._flambeau_original_class = cls  # type: ignore[attr-defined]
    module.__class__ = param_cls


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    r"""Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    r"""The module's class before any parametrization was registered."""
    return getattr(type(module), "_flambeau_original_class", type(module)) if is_parametrized(module) \
        else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    r"""Parametrize ``module.<tensor_name>`` by ``parametrization`` (a module mapping the original tensor to
    the one the module uses).

    Args:
        module: the module holding the parameter or buffer.
        tensor_name: its attribute name.
        parametrization: a module; its optional ``right_inverse(value)`` maps values back to originals
            (used at registration and when the parametrized tensor is assigned).
        unsafe: skip the check that the parametrization keeps the tensor's shape and dtype.

    Returns:
        ``module``.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype or x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {y.shape}\n"
                                 f"parametrized shape: {x.shape}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    original = getattr(module, tensor_name)
    if not unsafe:
        x = parametrization(original)
        if not isinstance(x, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
        if x.dtype != original.dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                             f"`unsafe` flag is enabled.\nunparametrized dtype: {original.dtype}\n"
                             f"parametrized dtype: {x.dtype}")
        if x.shape != original.shape:
            raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                             f"`unsafe` flag is enabled.\nunparametrized shape: {original.shape}\n"
                             f"parametrized shape: {x.shape}")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _make_property(tensor_name))
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    r"""Remove the parametrizations of ``module.<tensor_name>``.

    Args:
        leave_parametrized: keep the current parametrized value (else restore the original tensor).
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with flambeau.no_grad():
                value = getattr(module, tensor_name)
                if value.dtype != original.dtype or value.shape != original.shape:
                    original = Parameter(value.detach().clone(), original.requires_grad) \
                        if isinstance(original, Parameter) else value.detach().clone()
                else:
                    original.data = value.detach().clone().data
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        first = plist.original0
        with flambeau.no_grad():
            value = getattr(module, tensor_name).detach().clone()
        original = Parameter(value, first.requires_grad) if isinstance(first, Parameter) else value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module)._flambeau_original_class  # type: ignore[attr-defined]
    return module

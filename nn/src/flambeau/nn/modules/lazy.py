"""``LazyModuleMixin``: modules whose parameter shapes come from their first input."""
from __future__ import annotations

from typing import Any

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    r"""Mixin of the lazy modules (``LazyLinear``, ...): parameters start as
    :class:`UninitializedParameter` s; the first call runs ``initialize_parameters(*input)``, which
    materialises them, and the module then becomes ``cls_to_become`` (``Linear`` for ``LazyLinear``).
    Loading a state dict into a lazy module materialises its parameters with the loaded shapes.
    """

    cls_to_become: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        r"""Whether any parameter or buffer is still uninitialised."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())  # type: ignore[attr-defined]
        return any(is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        r"""Materialise the parameters from the first input (each lazy module writes its own)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _maybe_finish(self) -> None:
        if not self.has_uninitialized_params():
            self._initialize_hook.remove()
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become


def _infer_parameters(module: Any, args: tuple) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._maybe_finish()

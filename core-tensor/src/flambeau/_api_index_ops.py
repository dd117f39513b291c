"""The overloaded call forms of the index ops: ``where(condition)`` and ``Tensor.where``."""
from __future__ import annotations

from types import ModuleType
from typing import Any

from ._tensor import Tensor
from .ops._registry import FUNCTIONS


def where(condition: Tensor, input: Any = None, other: Any = None, *, out: Any = None) -> Any:
    """``where(condition, input, other)``: elements of ``input`` where ``condition`` holds, else of
    ``other``; ``where(condition)``: ``nonzero(condition, as_tuple=True)``.

    Args:
        condition: a bool tensor (broadcast with ``input`` and ``other``).
        input, other: tensors or numbers to choose from.

    Example::

        >>> fb.where(fb.tensor([0, 2, 3]))
        (tensor([1, 2]),)
    """
    if input is None and other is None:
        if out is not None:
            raise TypeError("where(): the single-argument form takes no 'out'")
        return FUNCTIONS["nonzero"](condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes 1 or 3 arguments (condition, input, other); got 2")
    return FUNCTIONS["where"](condition, input, other, out=out)


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``self.where(condition, other)``: ``where(condition, self, other)``."""
    return FUNCTIONS["where"](condition, self, other)


def install(namespace: ModuleType) -> None:
    namespace.where = where  # type: ignore[attr-defined]
    Tensor.where = _where_method  # type: ignore[attr-defined]

"""The call forms of the index ops that a declaration cannot give: ``where(condition)``,
``Tensor.where``, and ``out=`` for the ops whose result size depends on the data
(``masked_select``, ``nonzero``), which the dispatcher runs as dynamic ops without ``out=``."""
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


def _with_out(name: str) -> Any:
    """The op ``name`` taking ``out=``: the result is computed, then ``out`` is resized (as PyTorch
    resizes, warning when it had elements) and filled."""
    from .ops import _dispatch
    from .ops._registry import OPS

    fn = FUNCTIONS[name]
    decl = OPS[name]

    def op(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if isinstance(result, tuple):
            raise RuntimeError(f"{name}(): out= is not supported with as_tuple=True")
        (target,) = _dispatch.check_out(decl, (tuple(result.shape), result.dtype), out, False)
        return target.copy_(result)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = fn.__doc__
    op.__wrapped__ = fn  # type: ignore[attr-defined]
    return op


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``self.where(condition, other)``: ``where(condition, self, other)``."""
    return FUNCTIONS["where"](condition, self, other)


def install(namespace: ModuleType) -> None:
    namespace.where = where  # type: ignore[attr-defined]
    for name in ("masked_select", "nonzero"):
        setattr(namespace, name, _with_out(name))
    Tensor.where = _where_method  # type: ignore[attr-defined]

"""Op functions bound on first use.

``flambeau.nn`` is imported while the op plugins load (the plugin module ``flambeau.nn._ops.plugin``
lives inside it), before the registry has built the op functions, so the functional modules cannot
look their ops up at import time. A :class:`LazyOp` looks its op up on its first call and keeps it.
"""
from __future__ import annotations

from typing import Any, Callable


class LazyOp:
    """``flambeau.ops.function(name)``, resolved when first called."""

    __slots__ = ("name", "_fn")

    def __init__(self, name: str) -> None:
        self.name = name
        self._fn: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._fn
        if fn is None:
            import flambeau.ops

            fn = self._fn = flambeau.ops.function(self.name)
        return fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"LazyOp({self.name!r})"

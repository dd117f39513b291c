"""Named tuples returned by ops with several outputs (``flambeau.return_types.max`` ...)."""
from __future__ import annotations

from collections import namedtuple
from typing import Any

_cache: dict[str, Any] = {}


def for_op(op_name: str, fields: tuple[str, ...]) -> Any:
    """The named tuple type for an op's outputs; ``max_dim`` presents itself as ``max``."""
    public = op_name[:-4] if op_name.endswith("_dim") else op_name
    cls = _cache.get(public)
    if cls is None:
        cls = namedtuple(public, fields)
        cls.__module__ = "flambeau.return_types"
        cls.__repr__ = _repr  # type: ignore[method-assign]
        _cache[public] = cls
        globals()[public] = cls
    return cls


def _repr(self: Any) -> str:
    body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"flambeau.return_types.{type(self).__name__}(\n{body})"

"""``flambeau.device``: a device type and an optional index, as ``torch.device``."""
from __future__ import annotations

from typing import Any


class device:
    """Where a tensor's data lives: a type (``"cpu"``, ``"cuda"``, ``"meta"``...) and an index.

    Args:
        type: ``"cpu"``, ``"cuda:1"`` or any backend's device type, optionally with ``:index``.
        index: the device ordinal, or None for the backend's current device.

    Example::

        >>> fb.device("cuda:0")
        device(type='cuda', index=0)
    """

    __slots__ = ("type", "index", "_key")

    _cache: dict[Any, "device"] = {}

    def __new__(cls, type: "str | device | int", index: int | None = None) -> "device":
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): an index cannot be given with a device object")
            return type
        key = (type, index)
        cached = cls._cache.get(key)
        if cached is not None:
            return cached
        if isinstance(type, int):
            raise ValueError(
                "device(): a bare device ordinal is ambiguous; write 'cpu' or 'cuda:%d'" % type
            )
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        if not type:
            raise RuntimeError("Device string must not be empty")
        name, sep, ordinal = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}")
            if not ordinal.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(ordinal)
        if not name or not (name.isidentifier() and name.islower()):
            raise RuntimeError(f"Invalid device string: '{type}'")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError("Device index must not be negative")
        # One object per (type, index), so that the dispatcher may compare devices with `is`.
        obj = cls._cache.get((name, index, None))
        if obj is None:
            obj = object.__new__(cls)
            obj.type, obj.index = name, index
            obj._key = (name, index)
            cls._cache[(name, index, None)] = obj
        if len(cls._cache) < 4096:
            cls._cache[key] = obj
        return obj

    def __eq__(self, other: object) -> bool:
        # As PyTorch: a device never equals a string (compare ``str(dev)`` or ``dev.type`` for that).
        return isinstance(other, device) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (self.type, self.index))

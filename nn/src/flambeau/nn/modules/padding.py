"""Modules: padding (F.pad's modes and the padding layers)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Sequence

from flambeau import Tensor

from ..functional.padding import pad as _pad
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _ntuple(padding: Any, n: int) -> tuple:
    """An int repeated ``n`` times, or an iterable as a tuple (PyTorch's ``_ntuple`` parse)."""
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    """Shared forward and repr: ``F.pad(input, self.padding, mode)``."""

    __constants__ = ["padding"]
    _mode = "constant"
    _dims = 1
    padding: Sequence[int]

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return _pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)")
        return _pad(input, self.padding, "circular")


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    value: float

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return _pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _doc(kind: str, k: int, how: str) -> str:
    shapes = {1: "(N, C, W_{in}) or (C, W_{in})", 2: "(N, C, H_{in}, W_{in}) or (C, H_{in}, W_{in})",
              3: "(N, C, D_{in}, H_{in}, W_{in}) or (C, D_{in}, H_{in}, W_{in})"}[k]
    names = ("padding_left", "padding_right", "padding_top", "padding_bottom", "padding_front", "padding_back")
    return (f"Pads the input tensor {how}.\n\n"
            f"    Args:\n        padding (int, tuple): the size of the padding. If an ``int``, the same padding on "
            f"every boundary; a {2 * k}-tuple is ({', '.join(names[:2 * k])}).\n\n"
            f"    Shape:\n        - Input: :math:`{shapes}`.\n        - Output: the padded dims grow by their "
            f"two paddings.\n")


def _make(base: type, kind: str, k: int, how: str) -> type:
    cls = type(f"{kind}{k}d", (base,), {"_dims": k, "__doc__": _doc(kind, k, how), "__module__": __name__})
    return cls


ReflectionPad1d = _make(_ReflectionPadNd, "ReflectionPad", 1, "using the reflection of the input boundary")
ReflectionPad2d = _make(_ReflectionPadNd, "ReflectionPad", 2, "using the reflection of the input boundary")
ReflectionPad3d = _make(_ReflectionPadNd, "ReflectionPad", 3, "using the reflection of the input boundary")
ReplicationPad1d = _make(_ReplicationPadNd, "ReplicationPad", 1, "using replication of the input boundary")
ReplicationPad2d = _make(_ReplicationPadNd, "ReplicationPad", 2, "using replication of the input boundary")
ReplicationPad3d = _make(_ReplicationPadNd, "ReplicationPad", 3, "using replication of the input boundary")
ZeroPad1d = _make(_ZeroPadNd, "ZeroPad", 1, "boundaries with zero")
ZeroPad2d = _make(_ZeroPadNd, "ZeroPad", 2, "boundaries with zero")
ZeroPad3d = _make(_ZeroPadNd, "ZeroPad", 3, "boundaries with zero")
CircularPad1d = _make(_CircularPadNd, "CircularPad", 1, "using circular padding of the input boundary")
CircularPad2d = _make(_CircularPadNd, "CircularPad", 2, "using circular padding of the input boundary")
CircularPad3d = _make(_CircularPadNd, "CircularPad", 3, "using circular padding of the input boundary")


class ConstantPad1d(_ConstantPadNd):
    __doc__ = _doc("ConstantPad", 1, "boundaries with a constant value") + \
        "        value (float): the fill value.\n"
    _dims = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPadNd):
    __doc__ = ConstantPad1d.__doc__.replace("(N, C, W_{in}) or (C, W_{in})", "(N, C, H_{in}, W_{in}) or "
                                            "(C, H_{in}, W_{in})")
    _dims = 2

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPadNd):
    __doc__ = ConstantPad1d.__doc__.replace("(N, C, W_{in}) or (C, W_{in})", "(N, C, D_{in}, H_{in}, W_{in}) "
                                            "or (C, D_{in}, H_{in}, W_{in})")
    _dims = 3

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)

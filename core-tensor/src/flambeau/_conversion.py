"""``Tensor.to`` and ``Tensor.type``: dtype casts and copies between devices."""
from __future__ import annotations

from typing import Any

from . import _dtypes
from ._device import device as _device
from ._layout import format_name
from ._tensor import Tensor
from .ops._dispatch import resolve_device, to_device  # noqa: F401 - to_device: also read from here
from .ops._registry import FUNCTIONS

_TYPE_STRINGS = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
                 "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def _parse_to_args(tensor: Tensor, args: tuple, kwargs: dict) -> tuple[Any, Any, bool]:
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for arg in args:
        if isinstance(arg, _dtypes.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dev, dtype = arg._device, arg._dtype
        elif isinstance(arg, (str, _device, int)) and not isinstance(arg, bool):
            dev = _device(f"cuda:{arg}") if isinstance(arg, int) else _device(arg)
        elif isinstance(arg, bool):
            copy = arg
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(arg).__name__})")
    return dev, dtype, copy


def tensor_to(tensor: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Convert dtype and/or device: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    kwargs = dict(kwargs)
    memory_format = kwargs.pop("memory_format", None)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    dev, dtype, copy = _parse_to_args(tensor, args, kwargs)
    if memory_format is not None:
        if format_name(memory_format, "to") != "preserve_format":
            # the conversion keeps the layout; then the layout asked for (a copy only if needed)
            converted = tensor_to(tensor, *args, **kwargs)
            return converted.contiguous(memory_format=memory_format)
    result = tensor
    if dev is not None:
        dev = resolve_device(dev)
        if dev is not tensor._device:
            result = to_device(tensor, dev, non_blocking)
            copy = False
    if dtype is not None and dtype is not result._dtype:
        result = FUNCTIONS["to_dtype"](result, dtype)
        copy = False
    if copy and result is tensor:
        result = tensor.clone()
    return result


def tensor_type(tensor: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """With no argument, PyTorch's type string (``'flambeau.FloatTensor'``); else ``to(dtype)``."""
    if dtype is None:
        prefix = "flambeau." if tensor._device.type == "cpu" else f"flambeau.{tensor._device.type}."
        return prefix + _TYPE_STRINGS[tensor._dtype.name]
    if isinstance(dtype, str):
        # "flambeau.FloatTensor" (CPU) or "flambeau.cuda.FloatTensor" (a device type in the middle)
        prefix, _, name = dtype.rpartition(".")
        matches = [d for d, s in _TYPE_STRINGS.items() if s == name]
        parts = prefix.split(".")
        if not matches or parts[0] not in ("flambeau", "torch") or len(parts) > 2:
            raise ValueError(f"invalid type: '{dtype}'")
        target = _dtypes._BY_NAME[matches[0]]
        return tensor.to(parts[1] if len(parts) == 2 else "cpu", target)
    return tensor.to(dtype)

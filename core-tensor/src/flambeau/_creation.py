"""Creating tensors: from data, from numpy and DLPack, and filled with constants."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from . import _dtypes
from ._device import device as _device
from ._tensor import Tensor, wrap
from .ops._dispatch import factory_device
from .ops._registry import FUNCTIONS, TABLES
from .ops.meta import check_size


def _backend(dev: _device) -> Any:
    return TABLES[dev.type].backend


def _finish(result: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        result.requires_grad_(True)
    return result


def _infer_dtype(array: np.ndarray, from_python: bool) -> _dtypes.dtype:
    kind = array.dtype.kind
    if from_python:
        if kind == "b":
            return _dtypes.bool
        if kind in "iu":
            return _dtypes.int64
        if kind == "f":
            return _dtypes.get_default_dtype()
        if kind == "c":
            return _dtypes.default_complex_dtype()
    return _dtypes.from_numpy_dtype(array.dtype)


def _to_numpy(data: Any) -> tuple[np.ndarray, bool]:
    """Host array for ``data``, and whether its dtype came from Python values (to be re-inferred)."""
    if isinstance(data, np.ndarray):
        return data, False
    if isinstance(data, np.generic):
        return np.asarray(data), False
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (list, tuple)):
        _check_ragged(data)
    try:
        array = np.asarray(data)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}: {exc}") from None
    if array.dtype.kind in "OUSV":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    has_tensor = isinstance(data, Tensor) or _contains_tensor(data)
    return array, not has_tensor


def _contains_tensor(data: Any) -> bool:
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return isinstance(data, Tensor)


def _check_ragged(data: Any, dim: int = 0) -> None:
    """PyTorch's error for nested sequences of unequal lengths (numpy's is less helpful)."""
    nested = [isinstance(item, (list, tuple)) for item in data]
    if not any(nested):
        return
    length = len(data[0]) if nested[0] else None
    for item, is_seq in zip(data, nested):
        if not is_seq or len(item) != length:
            got = len(item) if is_seq else type(item).__name__
            raise ValueError(f"expected sequence of length {length} at dim {dim + 1} (got {got})")
    for item in data:
        _check_ragged(item, dim + 1)


def tensor(data: Any, *, dtype: _dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Construct a tensor that copies ``data`` (a number, nested sequence, numpy array or tensor).

    Args:
        data: the initial values.
        dtype: the dtype; inferred from ``data`` when None (Python floats give the default dtype).
        device: where to allocate it; the default device when None.
        requires_grad: whether autograd records operations on it.

    Example::

        >>> fb.tensor([[1., -1.], [1., -1.]])
        tensor([[ 1., -1.],
                [ 1., -1.]])
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
            "sourceTensor.clone().detach().requires_grad_(True), rather than flambeau.tensor(sourceTensor).",
            UserWarning, stacklevel=2,
        )
        result = data.detach().to(device if device is not None else data._device, dtype or data._dtype, copy=True)
        return _finish(result, requires_grad)
    array, from_python = _to_numpy(data)
    dt = dtype or _infer_dtype(array, from_python)
    dev = factory_device(device)
    host = np.array(array, dtype=dt.numpy_dtype, copy=True, order="C")
    return _finish(wrap(_backend(dev).from_numpy(host, dev), dt, dev), requires_grad)


def as_tensor(data: Any, dtype: _dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """Convert ``data`` to a tensor, sharing memory where possible (a CPU numpy array or tensor)."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data._device, dtype=dtype or data._dtype)
    if isinstance(data, np.ndarray) and (device is None or _device(device).type == "cpu"):
        shared = from_numpy(data)
        return shared if dtype is None or dtype is shared._dtype else shared.to(dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray``: writes to either show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) "
        )
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    dt = _dtypes.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and flambeau does not support non-writable tensors. "
                      "Writing to it through the tensor is undefined behavior.", UserWarning, stacklevel=2)
    cpu = _device("cpu")
    return wrap(ndarray, dt, cpu)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any object that implements the DLPack protocol."""
    if hasattr(ext_tensor, "__dlpack_device__"):
        dl_type, dl_index = ext_tensor.__dlpack_device__()
    else:
        dl_type, dl_index = 1, 0  # a bare capsule: assume host memory
    from .plugins._loader import backend_records

    for name in backend_records:
        backend = TABLES[name].backend if name == "cpu" or backend_records[name].status == "loaded" else None
        if backend is None:
            continue
        if getattr(backend, "dlpack_device_type", None) == dl_type:
            native = backend.from_dlpack(ext_tensor)
            return wrap(native, _dtypes.from_numpy_dtype(native.dtype), backend.device_of(native))
    raise RuntimeError(f"from_dlpack: no loaded backend accepts DLPack device type {dl_type} (index {dl_index})")


def _size_args(name: str, size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return check_size(name, size)


def _filled(name: str, size: tuple, value: Any, dtype: Any, device: Any, requires_grad: bool, out: Any) -> Tensor:
    shape = _size_args(name, size)
    if out is not None:
        if out.shape != shape:
            out._data = _backend(out._device).empty(shape, out._dtype, out._device)
        if value is not None:
            out.fill_(value)
        return out
    dt = dtype or _dtypes.get_default_dtype()
    dev = factory_device(device)
    backend = _backend(dev)
    native = backend.empty(shape, dt, dev) if value is None else backend.full(shape, value, dt, dev)
    return _finish(wrap(native, dt, dev), requires_grad)


def zeros(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, **_: Any) -> Tensor:
    """A tensor of ``size`` filled with 0 (``size`` as ints or one sequence)."""
    return _filled("zeros", size, 0, dtype, device, requires_grad, out)


def ones(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
         requires_grad: bool = False, **_: Any) -> Tensor:
    """A tensor of ``size`` filled with 1."""
    return _filled("ones", size, 1, dtype, device, requires_grad, out)


def empty(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, **_: Any) -> Tensor:
    """An uninitialised tensor of ``size``."""
    return _filled("empty", size, None, dtype, device, requires_grad, out)


def full(size: Sequence[int], fill_value: Any, *, out: Tensor | None = None, dtype: _dtypes.dtype | None = None,
         device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value when not given."""
    if dtype is None:
        value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        dtype = _dtypes.scalar_dtype(value)
    return _filled("full", (tuple(size),), fill_value, dtype, device, requires_grad, out)


def _like(input: Tensor, dtype: Any, device: Any) -> tuple:
    return input._data.shape, dtype or input._dtype, device if device is not None else input._device


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               **_: Any) -> Tensor:
    """``zeros`` with the shape (and by default the dtype and device) of ``input``."""
    shape, dt, dev = _like(input, dtype, device)
    return zeros(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              **_: Any) -> Tensor:
    """``ones`` with the shape (and by default the dtype and device) of ``input``."""
    shape, dt, dev = _like(input, dtype, device)
    return ones(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               **_: Any) -> Tensor:
    """``empty`` with the shape (and by default the dtype and device) of ``input``."""
    shape, dt, dev = _like(input, dtype, device)
    return empty(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, **_: Any) -> Tensor:
    """``full`` with the shape (and by default the dtype and device) of ``input``."""
    shape, dt, dev = _like(input, dtype, device)
    return full(shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (excluded), ``step`` apart; ``arange(n)`` counts from 0.

    Example::

        >>> fb.arange(5)
        tensor([0, 1, 2, 3, 4])
    """
    if end is None:
        start, end = 0, start
    result = FUNCTIONS["arange"](start, end, step, dtype=dtype, device=device, requires_grad=requires_grad)
    return result if out is None else out.copy_(result) if out.shape == result.shape else _resize_into(out, result)


def _resize_into(out: Tensor, result: Tensor) -> Tensor:
    out._data = _backend(out._device).empty(result._data.shape, out._dtype, out._device)
    return out.copy_(result)


def legacy_constructor(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``flambeau.Tensor(...)``: PyTorch's legacy float constructor (data, or sizes)."""
    device = kwargs.pop("device", None)
    if not args:
        return empty(0, device=device)
    if len(args) == 1 and not isinstance(args[0], int):
        return tensor(args[0], dtype=_dtypes.get_default_dtype(), device=device)
    return empty(*args, device=device)


def _rebuild(array: np.ndarray, dtype_name: str, device: str, requires_grad: bool) -> Tensor:
    return tensor(array, dtype=_dtypes._BY_NAME[dtype_name], device=device, requires_grad=requires_grad)

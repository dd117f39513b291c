"""Creating tensors: from data, from numpy and DLPack, and filled with constants."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from . import _dtypes
from ._device import device as _device
from ._layout import format_name, format_strides, like_strides, memory_format, preserve_format
from ._size import Size as _Size
from ._tensor import Tensor, wrap
from .ops._dispatch import factory_device
from .ops.meta import check_parsable_int, checked_scalar, wrapped_int
from .ops.sizes import checked_nbytes
from .ops._registry import FUNCTIONS, TABLES, backend_records, check_dtype


def _backend(dev: _device) -> Any:
    return TABLES[dev.type].backend


def _finish(result: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        result.requires_grad_(True)
    return result


_BYTE_ORDER_ERROR = ("given numpy array has byte order different from the native byte order. "
                     "Conversion between byte orders is currently not supported.")


def _leaf_dtype(value: Any) -> _dtypes.dtype:
    """The dtype one element of nested data contributes to inference (PyTorch's infer_scalar_type)."""
    if isinstance(value, Tensor):
        return value._dtype
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind in "OUS":  # (bfloat16 is kind "V": from_numpy_dtype tells it from other voids)
            raise TypeError(f"new(): invalid data type '{type(value).__name__}'")
        if not value.dtype.isnative:
            raise ValueError(_BYTE_ORDER_ERROR)
        return _dtypes.from_numpy_dtype(value.dtype)
    if isinstance(value, (bool, np.bool_)):
        return _dtypes.bool
    if isinstance(value, int):
        if not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        return _dtypes.int64
    if isinstance(value, float):
        return _dtypes.get_default_dtype()
    if isinstance(value, complex):
        return _dtypes.default_complex_dtype()
    if isinstance(value, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(value).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(value).__name__}")


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0) or (
        isinstance(value, Tensor) and value._data.ndim > 0)


def _scan(data: Any, dim: int, shape: list[int]) -> _dtypes.dtype | None:
    """Check nested sequences for a regular shape (PyTorch's errors) and infer their dtype.

    ``shape`` holds the lengths seen so far per dim; returns the promoted dtype of the leaves
    (None for an empty sequence).
    """
    if isinstance(data, np.ndarray) and data.ndim > 0:
        _check_length(shape, dim, data.shape[0])
        shape[dim + 1:] = []
        shape.extend(data.shape[1:])
        return _leaf_dtype(data)
    if isinstance(data, Tensor) and data._data.ndim > 0:  # PyTorch reads list elements as scalars
        raise TypeError("only integer tensors of a single element can be converted to an index")
    _check_length(shape, dim, len(data))
    result = None
    for item in data:
        if _is_sequence(item):
            if len(shape) == dim + 1 and result is not None:  # scalars came first at this depth
                raise TypeError(_scalar_type_error(result, item))
            found = _scan(item, dim + 1, shape)
        else:
            if len(shape) > dim + 1:  # sequences came first at this depth
                raise TypeError("not a sequence")
            found = _leaf_dtype(item)
        if found is not None:
            result = found if result is None else _dtypes.promote_types(result, found)
    return result


def _check_length(shape: list[int], dim: int, length: int) -> None:
    if len(shape) <= dim:
        shape.append(length)
    elif shape[dim] != length:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {length})")


def _scalar_type_error(leaf: _dtypes.dtype, item: Any) -> str:
    name = type(item).__name__
    if leaf._category == _dtypes._FLOAT:
        return f"must be real number, not {name}"
    if leaf._category == _dtypes._COMPLEX:
        return f"must be complex number, not {name}"
    return f"'{name}' object cannot be interpreted as an integer"


def _is_array_like(data: Any) -> bool:
    """Whether ``data`` is another library's array: it speaks DLPack or numpy's array protocols.

    Tensors, numpy arrays and numbers have their own paths; nested lists are read element by element.
    """
    kind = type(data)
    if kind in _OWN_PATHS or isinstance(data, (Tensor, np.ndarray, np.generic, list, tuple, bool, int, float,
                                               complex, str, bytes)):
        return False
    return hasattr(kind, "__dlpack__") or hasattr(kind, "__array_interface__") or hasattr(kind, "__array__")


#: the exact types `_is_array_like` answers for with one set lookup (the common calls: lists, arrays)
_OWN_PATHS = frozenset((Tensor, list, tuple, np.ndarray, float, int, bool, complex))


def _from_array_like(data: Any) -> Tensor:
    """A tensor sharing memory with another library's array (a PyTorch or JAX array, a CuPy one...).

    DLPack first, as PyTorch does: it keeps the device and never copies; then numpy's
    ``__array_interface__`` and ``__array__`` (host memory, shared when the object allows it).
    """
    if hasattr(type(data), "__dlpack__"):
        try:
            return from_dlpack(data)
        except BufferError:
            # e.g. a dtype DLPack cannot carry, or a read-only buffer numpy will not import;
            # the array protocols below may still read it
            if not (hasattr(type(data), "__array_interface__") or hasattr(type(data), "__array__")):
                raise
    return from_numpy(np.asarray(data))


def _host_data(data: Any) -> tuple[np.ndarray, _dtypes.dtype]:
    """``data`` (a number, nested sequences, a numpy array) as a host array and its inferred dtype."""
    if isinstance(data, np.ndarray):
        return data, _leaf_dtype(data)
    if isinstance(data, (list, tuple)):
        if _only_python_scalars(data):
            # The common case, at numpy's speed: a regular nest of Python numbers, whose numpy kind
            # gives PyTorch's dtype. Ragged data makes numpy raise; _scan then finds PyTorch's error.
            try:
                array = np.asarray(data)
            except (ValueError, OverflowError):
                array = None
            if array is not None and array.dtype.kind == "u":  # only ints above int64's range give uint64
                raise ValueError("Overflow when unpacking long long")
            if array is not None and array.dtype.kind in _KIND_DTYPES:
                return array, _KIND_DTYPES[array.dtype.kind]()
        dt = _scan(data, 0, [])
        if dt is None:
            dt = _dtypes.get_default_dtype()
        return _nested_to_numpy(data), dt
    dt = _leaf_dtype(data)
    return np.asarray(data._host() if isinstance(data, Tensor) else data), dt


_PY_SCALARS = frozenset((bool, int, float, complex))
_KIND_DTYPES = {"b": lambda: _dtypes.bool, "i": lambda: _dtypes.int64,
                "f": _dtypes.get_default_dtype, "c": _dtypes.default_complex_dtype}


def _only_python_scalars(data: Any) -> bool:
    """Whether nested lists/tuples hold only Python numbers (no numpy scalars, arrays or tensors)."""
    stack = [data]
    while stack:
        for value in stack.pop():
            kind = type(value)
            if kind in _PY_SCALARS:
                continue
            if kind is list or kind is tuple:
                stack.append(value)
                continue
            return False
    return True


def _holds_tensor(data: Any) -> bool:
    return any(isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and _holds_tensor(x)) for x in data)


def _nested_to_numpy(data: Any) -> np.ndarray:
    if isinstance(data, (list, tuple)) and _holds_tensor(data):
        return np.array([_nested_to_numpy(x) for x in data])
    if isinstance(data, Tensor):
        return np.asarray(data._host())
    array = np.asarray(data)
    if array.dtype.kind == "O":  # a mix numpy could not lay out (should have been caught by _scan)
        raise TypeError("new(): invalid data type 'object'")
    return array


def _check_overflow(array: np.ndarray, dt: _dtypes.dtype) -> None:
    """PyTorch refuses Python values that do not fit an integer dtype (unsigned ones wrap from -max)."""
    if dt._category != _dtypes._INT or array.size == 0 or array.dtype.kind not in "iuf":
        return
    info = np.iinfo(dt.numpy_dtype)
    # Python ints wrap into an unsigned dtype from -max up (-1 -> 255); Python floats must fit as they are.
    low = -int(info.max) if not dt.is_signed and array.dtype.kind != "f" else int(info.min)
    lo, hi = array.min(), array.max()
    if lo < low or hi > int(info.max):
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def tensor(data: Any, *, dtype: _dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Construct a tensor that copies ``data`` (a number, nested sequence, numpy array or tensor).

    Args:
        data: the initial values; also any other library's array (an object with ``__dlpack__``,
            ``__array_interface__`` or ``__array__``, such as a PyTorch or JAX array).
        dtype: the dtype; inferred from ``data`` when None (Python floats give the default dtype).
        device: where to allocate it; the default device when None.
        requires_grad: whether autograd records operations on it.

    Example::

        >>> fb.tensor([[1., -1.], [1., -1.]])
        tensor([[ 1., -1.],
                [ 1., -1.]])
    """
    if _is_array_like(data):  # another library's array: read through DLPack or numpy's protocols, then copied
        data = _from_array_like(data)
    elif isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
            "sourceTensor.clone().detach().requires_grad_(True), rather than flambeau.tensor(sourceTensor).",
            UserWarning, stacklevel=2,
        )
    if isinstance(data, Tensor):
        result = data.detach().to(device if device is not None else data._device, dtype or data._dtype, copy=True)
        return _finish(result, requires_grad)
    array, inferred = _host_data(data)
    dt = dtype or inferred
    if dtype is not None and not isinstance(data, np.ndarray):
        _check_overflow(array, dt)
    dev = factory_device(device)
    check_dtype(_backend(dev), dt)  # before any copy: a dtype the device's backend does not declare
    if array.dtype.kind == "c" and not dt.is_complex:
        array = array.real  # PyTorch drops the imaginary part (with a warning) when casting to real
    target = dt.numpy_dtype
    if array.dtype == target:
        host = np.array(array, copy=True, order="C")
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # 1e38 as float16 is inf, silently, as in PyTorch
            host = np.array(array, dtype=target, copy=True, order="C")
    return _finish(wrap(_backend(dev).from_numpy(host, dev), dt, dev), requires_grad)


def as_tensor(data: Any, dtype: _dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """Convert ``data`` to a tensor, sharing memory where possible.

    A tensor, a numpy array, or another library's array (anything with ``__dlpack__``,
    ``__array_interface__`` or ``__array__``) is shared when ``dtype`` and ``device`` allow it;
    anything else is copied as by :func:`tensor`.

    Args:
        data: the initial values.
        dtype: the dtype; ``data``'s own (or the inferred one) when None.
        device: the device; ``data``'s own (or the default device) when None.

    Example::

        >>> a = np.array([1., 2.])
        >>> t = fb.as_tensor(a)
        >>> t[0] = 5.
        >>> a
        array([5., 2.])
    """
    if _is_array_like(data):
        data = _from_array_like(data)
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data._device, dtype=dtype or data._dtype)
    if isinstance(data, np.ndarray) and (device is None or _device(device).type == "cpu"):
        shared = from_numpy(data)
        return shared if dtype is None or dtype is shared._dtype else shared.to(dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray``: writes to either show in the other.

    The tensor shares memory, never the array object: it keeps a view of its own, so that
    assigning ``ndarray.shape``, ``dtype`` or ``strides`` afterwards, or ``ndarray.setflags``,
    leaves the tensor as it was, and ``ndarray.resize`` is refused by numpy. A numpy subclass
    (``np.matrix``, a masked array, a ``memmap``) gives a tensor of its data as a plain array
    (a masked array's mask is dropped, as in PyTorch).

    Args:
        ndarray: a numpy array with native byte order and non-negative strides.

    Example::

        >>> a = np.array([1, 2, 3])
        >>> t = fb.from_numpy(a)
        >>> t[0] = -1
        >>> a
        array([-1,  2,  3])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) "
        )
    if not ndarray.dtype.isnative:
        raise ValueError(_BYTE_ORDER_ERROR)
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    dt = _dtypes.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and flambeau does not support non-writable tensors. "
                      "Writing to it through the tensor is undefined behavior.", UserWarning, stacklevel=2)
    # A fresh plain view: the caller's array object (and its subclass) never becomes the storage.
    return wrap(ndarray.view(np.ndarray), dt, _device("cpu"))


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any object that implements the DLPack protocol.

    An object without ``__dlpack__`` that offers numpy's ``__array_interface__`` or ``__array__``
    is read through those instead (host memory, shared when the object allows it).

    Args:
        ext_tensor: the array to share (a PyTorch, JAX, CuPy or numpy array...).

    Example::

        >>> t = fb.from_dlpack(np.arange(3.))
        >>> t
        tensor([0., 1., 2.], dtype=flambeau.float64)
    """
    if not isinstance(ext_tensor, Tensor) and not hasattr(type(ext_tensor), "__dlpack__") and (
            hasattr(type(ext_tensor), "__array_interface__") or hasattr(type(ext_tensor), "__array__")):
        return from_numpy(np.asarray(ext_tensor))
    if hasattr(ext_tensor, "__dlpack_device__"):
        dl_type, dl_index = ext_tensor.__dlpack_device__()
    else:
        dl_type, dl_index = 1, 0  # a bare capsule: assume host memory
    records = backend_records()
    for name in records:
        backend = TABLES[name].backend if name == "cpu" or records[name].status == "loaded" else None
        if backend is None:
            continue
        if getattr(backend, "dlpack_device_type", None) == dl_type:
            native = backend.from_dlpack(ext_tensor)
            return wrap(native, _dtypes.from_numpy_dtype(native.dtype), backend.device_of(native))
    raise RuntimeError(f"from_dlpack: no loaded backend accepts DLPack device type {dl_type} (index {dl_index})")


def scalar_tensor_like(value: Any, like: Tensor, true_division: bool = False) -> Tensor:
    """A Python number as a 0-d tensor on ``like``'s device, for reflected non-commutative operators.

    An int out of range of ``like``'s integer dtype wraps around, as PyTorch's integer arithmetic does,
    except for ``true_division``, which PyTorch computes in floating point from the int itself.
    """
    if isinstance(value, Tensor):
        return value
    if not isinstance(value, (bool, int, float, complex)):
        return NotImplemented
    if value.__class__ is bool:  # a bool stays bool (the lowest category), so `True - t` meets sub's bool check
        return tensor(value, device=like._device)
    if type(value) is int:
        check_parsable_int(value)  # as the op's own scalar operand: OverflowError past [-2**63, 2**64)
    # A scalar keeps its "weak" type: as a 0-d tensor of the tensor's dtype when in the same category.
    probe = _dtypes.result_type_of([like._dtype], [], [value])
    if type(value) is int and probe._category == _dtypes._INT:  # wraps around, as the op's own scalar would
        if true_division:
            return tensor(value, device=like._device)  # int64 0-d: same promotion, the exact value
        value = wrapped_int(value, probe)
    return tensor(value, dtype=probe, device=like._device)


def _size_args(name: str, size: tuple, keyword: Any = None) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(Size)`` or ``f(size=...)``: the shape, checked."""
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (keyword,)
    if len(size) == 1 and not isinstance(size[0], int):
        if not isinstance(size[0], (list, tuple)):
            if isinstance(size[0], Tensor) and size[0]._data.ndim == 0:
                size = (int(size[0]),)
            else:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {type(size[0]).__name__}")
        else:
            size = tuple(size[0])
    for pos, s in enumerate(size, 1):
        if isinstance(s, bool) or not isinstance(s, (int, Tensor)) or (isinstance(s, Tensor) and s._data.ndim):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {pos} with error "
                            f"\"type must be tuple of ints,but got {type(s).__name__}\"")
    shape = tuple(int(s) for s in size)
    for pos, s in enumerate(shape, 1):
        if s >= 1 << 63:  # PyTorch's argument parser reads sizes as int64
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {pos} with error "
                            "\"Overflow when unpacking long long\"")
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _filled(name: str, size: tuple, value: Any, dtype: Any, device: Any, requires_grad: bool, out: Any,
            keyword_size: Any = None) -> Tensor:
    shape = _size_args(name, size, keyword_size)
    if out is not None:
        if dtype is not None and dtype is not out._dtype:
            raise RuntimeError(f"dtype {_type_name(dtype)} does not match dtype of out parameter "
                               f"({_type_name(out._dtype)})")
        checked_nbytes(shape, out._dtype.itemsize)
        if tuple(out.shape) != shape:
            out._data = _backend(out._device).empty(shape, out._dtype, out._device)
        if value is not None:
            out.fill_(value)
        return out
    dt = dtype or _dtypes.get_default_dtype()
    checked_nbytes(shape, dt.itemsize)  # before any backend allocates (the meta backend would not refuse)
    dev = factory_device(device)
    backend = _backend(dev)
    check_dtype(backend, dt)
    if value is None:
        native = backend.empty(shape, dt, dev)
    else:  # PyTorch's checked conversion: RuntimeError when it does not fit, -1 is 255 for uint8
        native = backend.full(shape, checked_scalar(value, dt), dt, dev)
    return _finish(wrap(native, dt, dev), requires_grad)


def _type_name(dt: _dtypes.dtype) -> str:
    from .ops.meta import type_name

    return type_name(dt)


def zeros(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor filled with 0.

    Args:
        *size: the shape, as ints or as one sequence (``zeros(2, 3)``, ``zeros((2, 3))``).
        out: write into this tensor (resized to ``size``) instead of a new one.
        dtype: the dtype; the default dtype (float32) when None.
        device: where to allocate it; the default device when None.
        requires_grad: whether autograd records operations on it.

    Example::

        >>> fb.zeros(2, 3)
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
    """
    return _filled("zeros", size, 0, dtype, device, requires_grad, out, _keyword_size(kwargs))


def ones(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
         requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor filled with 1; arguments as :func:`zeros`.

    Example::

        >>> fb.ones(2, dtype=fb.int32)
        tensor([1, 1], dtype=flambeau.int32)
    """
    return _filled("ones", size, 1, dtype, device, requires_grad, out, _keyword_size(kwargs))


def empty(*size: Any, out: Tensor | None = None, dtype: _dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, memory_format: Any = None, **kwargs: Any) -> Tensor:
    """An uninitialised tensor; arguments as :func:`zeros`, and ``memory_format``
    (``flambeau.contiguous_format``, the default, ``flambeau.channels_last`` for 4-D or
    ``flambeau.channels_last_3d`` for 5-D shapes)."""
    if memory_format is not None:
        name = format_name(memory_format, "empty", default="contiguous_format")
        if name == "preserve_format":
            raise RuntimeError("unsupported memory format Preserve")  # as PyTorch
        if name != "contiguous_format" and out is None:
            shape = _size_args("empty", size, _keyword_size(kwargs))
            return empty_strided(shape, format_strides(shape, name), dtype=dtype, device=device,
                                 requires_grad=requires_grad)
    return _filled("empty", size, None, dtype, device, requires_grad, out, _keyword_size(kwargs))


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **_: Any) -> Tensor:
    """An uninitialised tensor with the given ``size`` and ``stride`` over storage just large enough.

    Example::

        >>> fb.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    storage = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    result = empty(storage, dtype=dtype, device=device).as_strided(size, stride, 0)
    result._base = None  # a fresh tensor, not a view of the scratch storage it was cut from
    if requires_grad:
        result.requires_grad_(True)
    return result


def clone(input: Tensor, *, memory_format: memory_format | None = None) -> Tensor:
    """clone(input, *, memory_format=flambeau.preserve_format) -> Tensor

    A copy with its own storage.

    Args:
        input (Tensor): the tensor to copy.
        memory_format (flambeau.memory_format, optional): ``flambeau.preserve_format`` (the default:
            a non-overlapping and dense input keeps its strides, as a transposed one does; any other
            takes the format its strides suggest), ``flambeau.contiguous_format``,
            ``flambeau.channels_last`` (4-D) or ``flambeau.channels_last_3d`` (5-D).

    Example::

        >>> fb.ones(3, 4).t().clone().stride()
        (1, 4)
    """
    if input.__class__ is not Tensor and not isinstance(input, Tensor):
        return FUNCTIONS["clone"](input)  # the op's own type error
    if memory_format is None or memory_format is preserve_format:
        flags = getattr(input._data, "flags", None)  # numpy and CuPy arrays say it for free
        if flags is not None and flags.c_contiguous and input._data.size:  # (numpy: every empty array is)
            return FUNCTIONS["clone"](input)
    strides = like_strides(input, memory_format, "clone")
    if strides is None:
        return FUNCTIONS["clone"](input)
    result = empty_strided(tuple(input.shape), strides, dtype=input.dtype, device=input.device)
    return result.copy_(input)


def _keyword_size(kwargs: dict) -> Any:
    """``size=`` given as a keyword; the other PyTorch keywords (layout, pin_memory...) are accepted."""
    kwargs.pop("layout", None)
    kwargs.pop("pin_memory", None)
    kwargs.pop("memory_format", None)
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kwargs))}'")
    return size


def full(size: Sequence[int], fill_value: Any, *, out: Tensor | None = None, dtype: _dtypes.dtype | None = None,
         device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``.

    Args:
        size: the shape, a sequence of ints.
        fill_value: the value; when ``dtype`` is None it also gives the dtype (bool, int64, or the
            default float dtype).

    Example::

        >>> fb.full((2,), 7)
        tensor([7, 7])
    """
    _keyword_size(kwargs)
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    if dtype is None and out is None:
        value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        dtype = _dtypes.scalar_dtype(value)
    return _filled("full", (tuple(size),), fill_value, dtype, device, requires_grad, out)


def _like(input: Tensor, dtype: Any, device: Any) -> tuple:
    return input._data.shape, dtype or input._dtype, device if device is not None else input._device


def _like_layout(name: str, input: Tensor, dtype: Any, device: Any, requires_grad: bool, memory_format: Any,
                 fill: Any) -> Tensor | None:
    """A ``*_like`` tensor laid out as ``memory_format`` asks, or None when that is row-major (the
    caller then allocates as usual). ``fill``: the value, None to leave it uninitialised."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    strides = like_strides(input, memory_format, name)
    if strides is None:
        return None
    shape, dt, dev = _like(input, dtype, device)
    result = empty_strided(shape, strides, dtype=dt, device=dev)
    if fill is not None:
        result.fill_(fill)
    return result.requires_grad_(True) if requires_grad else result


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None, **_: Any) -> Tensor:
    """``zeros`` with the shape (and by default the dtype, device and memory layout) of ``input``;
    ``memory_format`` as :func:`empty_like`."""
    laid = _like_layout("zeros_like", input, dtype, device, requires_grad, memory_format, 0)
    if laid is not None:
        return laid
    shape, dt, dev = _like(input, dtype, device)
    return zeros(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None, **_: Any) -> Tensor:
    """``ones`` with the shape (and by default the dtype, device and memory layout) of ``input``;
    ``memory_format`` as :func:`empty_like`."""
    laid = _like_layout("ones_like", input, dtype, device, requires_grad, memory_format, 1)
    if laid is not None:
        return laid
    shape, dt, dev = _like(input, dtype, device)
    return ones(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None, **_: Any) -> Tensor:
    """empty_like(input, *, dtype=None, device=None, requires_grad=False, \
memory_format=flambeau.preserve_format) -> Tensor

    An uninitialised tensor with the shape (and by default the dtype and device) of ``input``.

    Args:
        input (Tensor): the tensor whose shape (and layout) to take.
        memory_format (flambeau.memory_format, optional): ``flambeau.preserve_format`` (the
            default: a non-overlapping and dense ``input``'s strides, as a transposed one has;
            otherwise the format its strides suggest), ``flambeau.contiguous_format``,
            ``flambeau.channels_last`` (4-D) or ``flambeau.channels_last_3d`` (5-D).

    Example::

        >>> fb.empty_like(fb.ones(2, 3).t()).stride()
        (1, 2)
    """
    laid = _like_layout("empty_like", input, dtype, device, requires_grad, memory_format, None)
    if laid is not None:
        return laid
    shape, dt, dev = _like(input, dtype, device)
    return empty(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None, **_: Any) -> Tensor:
    """``full`` with the shape (and by default the dtype, device and memory layout) of ``input``;
    ``memory_format`` as :func:`empty_like`."""
    if not isinstance(input, Tensor):
        raise TypeError(f"full_like(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    shape, dt, dev = _like(input, dtype, device)
    plain = full(shape, fill_value, dtype=dt, device=dev)  # full's checks of the value, and its dtype
    laid = _like_layout("full_like", input, plain.dtype, device, False, memory_format, None)
    result = plain if laid is None else laid.copy_(plain)
    return result.requires_grad_(True) if requires_grad else result


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
    """``flambeau.Tensor(...)``: PyTorch's legacy float constructor.

    ``Tensor()`` is empty, ``Tensor(2, 3)`` and ``Tensor(Size([2, 3]))`` are uninitialised of that
    shape, ``Tensor(data)`` copies a sequence as the default dtype, ``Tensor(tensor)`` aliases it.
    """
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got unexpected keyword "
                        f"'{next(iter(kwargs))}'")
    if not args:
        return empty(0, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, _Size):
            return empty(data, device=device)
        if isinstance(data, Tensor):
            return data
        if isinstance(data, (list, tuple, np.ndarray)) or _is_array_like(data):
            return tensor(data, dtype=_dtypes.get_default_dtype(), device=device)
        if not isinstance(data, int):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return empty(*args, device=device)


def _rebuild(array: np.ndarray, dtype_name: str, device: str, requires_grad: bool) -> Tensor:
    return tensor(array, dtype=_dtypes._BY_NAME[dtype_name], device=device, requires_grad=requires_grad)


# -- Tensor methods installed by flambeau._late_bindings (the Tensor stands below this module) ----

def new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``Tensor.new_tensor``: a copy of ``data`` with this tensor's dtype and device unless given."""
    return tensor(data, dtype=dtype or self._dtype, device=device or self._device, requires_grad=requires_grad)


def array_wrap(self: Tensor, array: np.ndarray, context: Any = None, return_scalar: bool = False) -> Tensor:
    """``Tensor.__array_wrap__``: numpy ufuncs on tensors give tensors (``np.sin(t)``); bool results
    become uint8, as in PyTorch."""
    array = np.asarray(array)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return from_numpy(np.ascontiguousarray(array) if any(s < 0 for s in array.strides) else array)


def tensor_reduce_ex(self: Tensor, protocol: int) -> Any:
    """``Tensor.__reduce_ex__``: pickled as its values, dtype, device and ``requires_grad``."""
    return (_rebuild, (np.array(self._host()), self._dtype.name, str(self._device), self._requires_grad))

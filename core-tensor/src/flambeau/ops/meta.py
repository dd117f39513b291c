"""Helpers for meta functions: broadcasting, dim wrapping, result dtypes, shape checks.

Public so that other packages' meta functions give the same errors as core-tensor's.
"""
from __future__ import annotations

import operator
from typing import Any, Iterable, Sequence

from .. import _dtypes
from .._dtypes import dtype
from .._tensor import Tensor
from .sizes import checked_numel

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def type_name(d: dtype) -> str:
    """PyTorch's C++ name of a dtype, as its error messages print it (``Float``, ``Long``...)."""
    return _TYPE_NAMES[d.name]


def fmt_shape(shape: Iterable[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def wrap_dim(dim: Any, ndim: int) -> int:
    """A dim in ``[-ndim, ndim)`` made non-negative (a 0-d tensor accepts 0 and -1)."""
    if isinstance(dim, Tensor):
        dim = int(dim)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if dim < low or dim > high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % ndim if ndim else 0


def wrap_dim_of_dims(dim: Any, ndim: int) -> int:
    """``wrap_dim`` for ops that need a real dimension (``roll``, ``unique(dim=)``, ``take_along_dim``):
    a 0-d tensor has none, and PyTorch refuses even 0 and -1 there."""
    if ndim == 0 and isinstance(dim, int) and not isinstance(dim, bool):
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def wrap_dims(dims: Any, ndim: int) -> tuple[int, ...]:
    """A dim or a sequence of dims, wrapped, each at most once."""
    if isinstance(dims, int):
        return (wrap_dim(dims, ndim),)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return out


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape that all ``shapes`` broadcast to, or PyTorch's error naming the mismatch."""
    ndim = max(len(s) for s in shapes)
    result = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, size in enumerate(shape):
            current = result[offset + i]
            if size == current or size == 1:
                continue
            if current == 1:
                result[offset + i] = size
            else:
                raise RuntimeError(
                    f"The size of tensor a ({current}) must match the size of tensor b ({size}) "
                    f"at non-singleton dimension {offset + i}"
                )
    return tuple(result)


def shape_of(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else ()


def broadcast(a: Any, b: Any) -> tuple[int, ...]:
    """The broadcast shape of two operands, either of which may be a Python scalar."""
    sa = a._data.shape if isinstance(a, Tensor) else ()
    sb = b._data.shape if isinstance(b, Tensor) else ()
    if sa == sb:
        return sa
    if not sb:
        return sa
    if not sa:
        return sb
    return broadcast_shapes(sa, sb)


def result_type(*operands: Any) -> dtype:
    """PyTorch's result dtype for tensors and Python scalars (``torch.result_type`` for many)."""
    dims, zeros, scalars = [], [], []
    for x in operands:
        if isinstance(x, Tensor):
            (dims if x._data.ndim else zeros).append(x._dtype)
        elif x is not None:
            if not isinstance(x, (bool, int, float, complex)):
                raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")
            if type(x) is int:
                check_parsable_int(x)
            scalars.append(x)
    return _dtypes.result_type_of(dims, zeros, scalars)


def check_parsable_int(value: int) -> None:
    """PyTorch's argument parser takes a Python int in ``[-2**63, 2**64)`` (int64, else uint64) for any
    dtype: ``float_tensor + 10**40`` raises its OverflowError rather than adding infinity."""
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    if value < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")


def binary_result_type(a: Any, b: Any) -> dtype:
    """``result_type`` for two operands, with the common same-dtype case first."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._dtype is b._dtype:
                return a._dtype
        elif type(b) is float and a._dtype._category == _dtypes._FLOAT:
            return a._dtype
        elif type(b) is int and a._dtype._category >= _dtypes._INT:
            if a._dtype._category > _dtypes._INT:  # an int tensor's kernel checks the range as it wraps
                check_parsable_int(b)
            return a._dtype
    if b is None:
        raise TypeError("expected a Tensor or a Python number, got NoneType")
    return result_type(a, b)


def to_float(d: dtype) -> dtype:
    """Integral and bool dtypes become the default float dtype (``exp``, ``sqrt``, ``/``...)."""
    return d if d._category >= _dtypes._FLOAT else _dtypes.get_default_dtype()


def is_integral(d: dtype, include_bool: bool = True) -> bool:
    return d._category == _dtypes._INT or (include_bool and d is _dtypes.bool)


def check_dtype_in(op: str, d: dtype, allowed: Iterable[dtype]) -> None:
    if d not in allowed:
        raise RuntimeError(f'"{op}" not implemented for \'{type_name(d)}\'')


def reduced_shape(shape: Sequence[int], dims: tuple[int, ...] | None, keepdim: bool) -> tuple[int, ...]:
    """The shape left after reducing ``dims`` (all dims when None)."""
    if dims is None:
        return tuple(1 for _ in shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def reduction_shape(input: Tensor, dim: Any, keepdim: bool) -> tuple[int, ...]:
    """The shape a reduction of ``input`` over ``dim`` leaves (:func:`reduction_dims` rules; its
    errors too). One int dim of an n-d tensor, the common call, builds no intermediate tuples."""
    shape = input._data.shape
    if dim.__class__ is int and -len(shape) <= dim < len(shape):
        d = dim % len(shape)
        return shape[:d] + ((1,) if keepdim else ()) + shape[d + 1:]
    return reduced_shape(shape, reduction_dims(input, dim), keepdim)


def reduction_dims(input: Tensor, dim: Any) -> tuple[int, ...] | None:
    """Normalise a reduction's ``dim`` (None, an int, or a sequence; an empty one means all)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return None
    return wrap_dims(dim, input._data.ndim)


def check_size(op: str, shape: Sequence[int]) -> tuple[int, ...]:
    """A size argument checked for negative or non-integer entries."""
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {s}: {fmt_shape(shape)}")
        out.append(s)
    return tuple(out)


# PyTorch's C++ names of the integer types, as its checked scalar conversions print them.
_C_INT_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}
#: The narrower float types' largest finite values and C++ names: a finite scalar past them is
#: refused as PyTorch's checked conversion refuses it (``fill_(1e10)`` on float16).
_INF = float("inf")
_FLOAT_LIMITS = {"float16": (65504.0, "c10::Half"), "bfloat16": (3.3895313892515355e38, "c10::BFloat16"),
                 "float32": (3.4028234663852886e38, "float")}


def checked_scalar(value: Any, d: dtype) -> Any:
    """A Python number converted as PyTorch converts a scalar it stores into a tensor of dtype ``d``.

    This is the checked conversion of fill values (``fill_``, ``full``, ``masked_fill``,
    ``index_fill``), clamp bounds, ``where``'s scalars, ``alpha`` and ``value`` arguments, and
    scalar exponents; arithmetic, bitwise and comparison operands wrap around instead (the
    backend's business). An int or float that does not fit an integer dtype raises RuntimeError;
    unsigned dtypes take ints down to ``-max``, wrapped (-1 fills a uint8 with 255). A Python int
    outside ``[-2**63, 2**64)`` raises PyTorch's argument parser's OverflowError for any dtype.
    Anything else (bool, complex, a float for a float dtype, a tensor) comes back as it is.

    Example::

        >>> checked_scalar(-1, flambeau.uint8)
        255
        >>> checked_scalar(300, flambeau.uint8)
        RuntimeError: value cannot be converted to type uint8_t without overflow
    """
    kind = type(value)
    if kind is int:
        if value >= 1 << 64:
            raise OverflowError("int too big to convert")
        if value < -(1 << 63):
            raise OverflowError("can't convert negative int to unsigned")
    elif kind is not float:
        return value
    if d._category != _dtypes._INT:
        if d._category == _dtypes._FLOAT and d.itemsize < 8:
            limit, c_name = _FLOAT_LIMITS[d.name]
            if -limit <= value <= limit or value != value or value in (_INF, -_INF):
                return value
            raise RuntimeError(f"value cannot be converted to type {c_name} without overflow")
        return value
    bits = d.itemsize * 8
    high = (1 << (bits - 1)) - 1 if d.is_signed else (1 << bits) - 1
    low = -(1 << (bits - 1)) if d.is_signed else (-high if kind is int else 0)
    if low <= value <= high:  # NaN fails it
        return value % (high + 1) if value < 0 and not d.is_signed else value
    raise RuntimeError(f"value cannot be converted to type {_C_INT_NAMES[d.name]} without overflow")


def wrapped_int(value: int, d: dtype) -> int:
    """A Python int operand wrapped into the integer dtype ``d`` (two's complement), as PyTorch wraps
    the scalar of an arithmetic, bitwise or comparison op (``1000 - uint8_tensor`` subtracts from
    232). Ints outside ``[-2**63, 2**64)`` raise the argument parser's OverflowError.

    Example::

        >>> wrapped_int(1000, flambeau.uint8), wrapped_int(200, flambeau.int8)
        (232, -56)
    """
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    if value < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")
    bits = d.itemsize * 8
    value &= (1 << bits) - 1
    if d.is_signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def expanded_shape(input_shape: Sequence[int], size: Sequence[int], type_string: str = "flambeau.FloatTensor"
                   ) -> tuple[int, ...]:
    """The shape ``expand(size)`` gives a tensor of ``input_shape`` (``-1`` keeps a size), or PyTorch's error."""
    size = tuple(operator.index(s) for s in size)  # not int(): "2" and 2.5 are refused, as in PyTorch
    if len(size) < len(input_shape):
        raise RuntimeError(
            f"expand({type_string}{{{fmt_shape(input_shape)}}}, size={fmt_shape(size)}): the number of sizes "
            f"provided ({len(size)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(input_shape)})"
        )
    offset = len(size) - len(input_shape)
    out = []
    for i, target in enumerate(size):
        if i < offset:
            if target < 0:
                raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            out.append(target)
            continue
        have = input_shape[i - offset]
        if target == -1:
            out.append(have)
        elif have == target or have == 1:
            out.append(target)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size ({have}) at non-singleton "
                f"dimension {i}.  Target sizes: {fmt_shape(size)}.  Tensor sizes: {fmt_shape(input_shape)}"
            )
    checked_numel(out)
    return tuple(out)

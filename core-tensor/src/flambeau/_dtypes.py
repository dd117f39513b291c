"""dtypes, their numpy equivalents, and PyTorch's type-promotion rules."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "promote_types", "result_type",
    "can_cast", "set_default_dtype", "get_default_dtype", "finfo", "iinfo",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, like ``torch.dtype``; compare with ``is`` or ``==``."""

    __slots__ = ("name", "itemsize", "_category", "_np", "is_signed", "_rank")

    def __init__(self, name: str, itemsize: int, category: int, np_dtype: Any, signed: bool, rank: int):
        self.name = name
        self.itemsize = itemsize
        self._category = category
        self._np = np_dtype  # None until first use for bfloat16 (ml_dtypes is slow to import)
        self.is_signed = signed
        self._rank = rank

    @property
    def is_floating_point(self) -> bool:
        return self._category == _FLOAT

    @property
    def is_complex(self) -> bool:
        return self._category == _COMPLEX

    @property
    def numpy_dtype(self) -> np.dtype:
        if self._np is None:
            import ml_dtypes  # deferred: costs ~30 ms at import

            self._np = np.dtype(ml_dtypes.bfloat16)
            _FROM_NUMPY[self._np] = self
        return self._np

    def to_real(self) -> "dtype":
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> "dtype":
        return {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}.get(self, self)

    def __repr__(self) -> str:
        return f"flambeau.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


bool = dtype("bool", 1, _BOOL, np.dtype(np.bool_), False, 0)
uint8 = dtype("uint8", 1, _INT, np.dtype(np.uint8), False, 1)
int8 = dtype("int8", 1, _INT, np.dtype(np.int8), True, 2)
int16 = dtype("int16", 2, _INT, np.dtype(np.int16), True, 3)
int32 = dtype("int32", 4, _INT, np.dtype(np.int32), True, 4)
int64 = dtype("int64", 8, _INT, np.dtype(np.int64), True, 5)
float16 = dtype("float16", 2, _FLOAT, np.dtype(np.float16), True, 6)
bfloat16 = dtype("bfloat16", 2, _FLOAT, None, True, 7)
float32 = dtype("float32", 4, _FLOAT, np.dtype(np.float32), True, 8)
float64 = dtype("float64", 8, _FLOAT, np.dtype(np.float64), True, 9)
complex64 = dtype("complex64", 8, _COMPLEX, np.dtype(np.complex64), True, 10)
complex128 = dtype("complex128", 16, _COMPLEX, np.dtype(np.complex128), True, 11)

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
# PyTorch's aliases: torch.float, torch.double, torch.half, torch.long, ...
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
           "short": int16, "cfloat": complex64, "cdouble": complex128}
_FROM_NUMPY: dict[np.dtype, dtype] = {d._np: d for d in ALL_DTYPES if d._np is not None}


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The flambeau dtype for a numpy dtype; TypeError for one flambeau lacks."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        pass
    if np_dtype.name == "bfloat16":
        _ = bfloat16.numpy_dtype  # importing ml_dtypes registers it
        return bfloat16
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported types are: "
        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
    )


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == _COMPLEX and lo._category == _FLOAT:
            wide = _promote_pair(hi.to_real(), lo)
            return wide.to_complex()
        return hi
    if a._category == _INT:
        if a.is_signed == b.is_signed:
            return a if a.itemsize > b.itemsize else b
        # uint8 with a signed type: the signed type must hold 0..255
        signed = a if a.is_signed else b
        return int16 if signed.itemsize == 1 else signed
    if a._category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` can be cast to, as ``torch.promote_types``."""
    return _PROMOTE[type1, type2]


class _DefaultDtype:
    """The default floating-point dtype: process-wide, as PyTorch's (a thread that sets it changes
    it for every thread)."""

    value = float32


_default = _DefaultDtype()


def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors created from Python floats (float32 unless changed)."""
    return _default.value


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype; only float16, bfloat16, float32 and float64 are allowed."""
    if not isinstance(d, dtype) or d._category != _FLOAT:
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def default_complex_dtype() -> dtype:
    return complex128 if _default.value is float64 else complex64


def scalar_dtype(value: Any) -> dtype:
    """The dtype a Python scalar would get as a tensor of its own."""
    if isinstance(value, builtins_bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default.value
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


import builtins as _builtins  # noqa: E402  (the name `bool` is shadowed above)

builtins_bool = _builtins.bool


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # Mirrors PyTorch: a lower-priority operand only matters when it is of a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        return higher.to_complex() if higher._category == _FLOAT else lower
    if higher._category == _FLOAT:
        return higher
    if higher is bool or lower._category == _FLOAT:
        return _PROMOTE[higher, lower]
    return higher


def result_type_of(dims: list[dtype], zero_dims: list[dtype], scalars: list[Any]) -> dtype:
    """PyTorch's result type given dimensioned tensors, 0-dim tensors and Python scalars."""
    def fold(types):
        out = None
        for t in types:
            out = t if out is None else _PROMOTE[out, t]
        return out

    wrapped = None
    for s in scalars:
        t = scalar_dtype(s)
        wrapped = t if wrapped is None else _PROMOTE[wrapped, t]
    return _combine_categories(fold(dims), _combine_categories(fold(zero_dims), wrapped))


def result_type(tensor1: Any, tensor2: Any) -> dtype:
    """``torch.result_type``: the dtype an arithmetic op on the two operands would give."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if hasattr(x, "_dtype"):
            (dims if x.ndim else zeros).append(x._dtype)
        else:
            scalars.append(x)
    return result_type_of(dims, zeros, scalars)


def can_cast(from_: dtype, to: dtype) -> builtins_bool:
    """Whether PyTorch allows writing ``from_`` results into ``to`` (no category narrowing)."""
    if from_._category > to._category:
        return False
    if from_._category != _BOOL and to is bool:
        return False
    return True


class finfo:
    """Machine limits for floating-point dtypes, as ``torch.finfo``.

    Args:
        type: a floating-point or complex dtype (complex gives its real part's limits); the
            default dtype when None.

    Example::

        >>> fb.finfo(fb.float16).eps
        0.0009765625
    """

    def __init__(self, type: dtype | None = None):
        type = type or _default.value
        if not isinstance(type, dtype) or type._category not in (_FLOAT, _COMPLEX):
            raise TypeError("flambeau.finfo() requires a floating point input type. "
                            "Use flambeau.iinfo to handle 'flambeau.finfo'")
        real = type.to_real()
        if real is bfloat16:
            import ml_dtypes

            info: Any = ml_dtypes.finfo(real.numpy_dtype)
        else:
            info = np.finfo(real.numpy_dtype)
        self.dtype = real.name
        self.bits = real.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        # PyTorch's resolution is exactly 10 ** -precision, not numpy's value rounded to the dtype.
        self.resolution = float(10.0 ** -int(info.precision))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits for integer dtypes, as ``torch.iinfo``.

    Args:
        type: an integer dtype (uint8, int8, int16, int32 or int64).

    Example::

        >>> fb.iinfo(fb.int8).min
        -128
    """

    def __init__(self, type: dtype):
        if type is bool:
            raise TypeError("flambeau.bool is not supported by flambeau.iinfo")
        if not isinstance(type, dtype) or type._category != _INT:
            raise TypeError("flambeau.iinfo() requires an integer input type. "
                            "Use flambeau.finfo to handle 'flambeau.iinfo'")
        info = np.iinfo(type.numpy_dtype)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

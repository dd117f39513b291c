"""The kit's own statement of PyTorch's result-dtype rules, written independently of the core's.

Expected dtypes come from here, so that a backend (or a core meta function) that gets
promotion wrong is caught rather than agreed with.
"""
from __future__ import annotations

from typing import Any, Iterable

BOOL = ("bool",)
UNSIGNED = ("uint8",)
SIGNED = ("int8", "int16", "int32", "int64")
INTS = UNSIGNED + SIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
ALL = BOOL + INTS + FLOATS + COMPLEX
REAL = BOOL + INTS + FLOATS
INTEGRAL = BOOL + INTS  # bool counts as integral for bitwise ops

_CATEGORY = {**{d: 0 for d in BOOL}, **{d: 1 for d in INTS}, **{d: 2 for d in FLOATS}, **{d: 3 for d in COMPLEX}}
_SIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
         "float32": 4, "float64": 8, "complex64": 8, "complex128": 16}
DEFAULT_FLOAT = "float32"


def category(dtype: str) -> int:
    return _CATEGORY[dtype]


def promote_types(a: str, b: str) -> str:
    """``torch.promote_types`` for two dtype names."""
    if a == b:
        return a
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if _CATEGORY[hi] == 3 and _CATEGORY[lo] == 2:
            return "complex128" if lo == "float64" or hi == "complex128" else "complex64"
        return hi
    if ca == 1:
        if "uint8" in (a, b):  # uint8 with a signed int needs the next wider signed int
            other = b if a == "uint8" else a
            return "int16" if other == "int8" else other
        return a if _SIZE[a] > _SIZE[b] else b
    if ca == 2 and {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if _SIZE[a] > _SIZE[b] else b


def to_complex(dtype: str) -> str:
    return "complex128" if dtype in ("float64", "complex128") else "complex64"


def _combine(higher: str | None, lower: str | None) -> str | None:
    """A lower-priority group's dtype matters only when its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _CATEGORY[higher], _CATEGORY[lower]
    if ch == 3:
        return higher
    if cl == 3:
        return to_complex(higher) if ch == 2 else lower
    if ch == 2:
        return higher
    if ch == 0 or cl == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return DEFAULT_FLOAT
    if isinstance(value, complex):
        return "complex64"
    raise TypeError(f"not a Python number: {value!r}")


def _fold(dtypes: Iterable[str]) -> str | None:
    out = None
    for d in dtypes:
        out = d if out is None else promote_types(out, d)
    return out


def result_type(operands: Iterable[Any]) -> str:
    """PyTorch's result dtype for operands given as ``(dtype, ndim)`` pairs (tensors) or Python numbers.

    Dimensioned tensors rank above 0-d tensors, which rank above Python numbers; a lower rank
    changes the result only when it brings a higher category.
    """
    dims, zeros, scalars = [], [], []
    for x in operands:
        if x is None:
            continue
        if isinstance(x, tuple):
            (dims if x[1] else zeros).append(x[0])
        else:
            scalars.append(scalar_dtype(x))
    result = _combine(_fold(dims), _combine(_fold(zeros), _fold(scalars)))
    assert result is not None, "result_type needs at least one operand"
    return result


def to_float(dtype: str) -> str:
    """Integral and bool dtypes become the default float dtype (``exp``, true division...)."""
    return dtype if _CATEGORY[dtype] >= 2 else DEFAULT_FLOAT


def to_real(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)

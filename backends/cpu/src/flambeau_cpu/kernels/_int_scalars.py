"""Python ints that do not fit an integer tensor's dtype, wrapped around as PyTorch wraps them.

PyTorch converts a Python int operand of an arithmetic, bitwise or comparison op to the integer
tensor's dtype by two's-complement wrap-around: ``uint8 + 1000`` adds 232, ``int8 < 200`` compares
with -56, ``uint8 // 256`` divides by zero. numpy 2 (NEP 50) refuses such an int with
``OverflowError: Python integer 1000 out of bounds for uint8`` before it writes anything, and its
comparisons answer for the exact mathematical value instead. The kernels catch the OverflowError
(an ``except`` clause costs nothing until it runs) and call again with the ints wrapped; the
comparisons, which do not raise, check an int operand's range first.

Ops that PyTorch converts with a range check instead (fill values, clamp bounds, ``alpha``...)
are refused by their meta functions (``flambeau.ops.meta.check_scalar_fits``); what reaches a
kernel from them is in range, but may still be a negative value for an unsigned dtype
(``clamp(uint8, min=-5)`` clamps at 251), which the same wrap-around gives.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ._signature_wrap import with_signature

_INT64_MAX = (1 << 63) - 1
_BOUNDS: dict[np.dtype, tuple[int, int]] = {
    np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
    for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)
}
_BOOL_UINT64 = ("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote Bool and UInt64")


def check_parsable(value: int) -> None:
    """PyTorch's argument parser takes Python ints in ``[-2**63, 2**64)`` (int64, else uint64)."""
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    if value < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")


def wrap_int(value: int, dt: np.dtype) -> int:
    """``value`` wrapped into the integer dtype ``dt`` (two's complement), as a Python int.

    Example::

        >>> wrap_int(1000, np.dtype(np.uint8)), wrap_int(200, np.dtype(np.int8))
        (232, -56)
    """
    check_parsable(value)
    bits = dt.itemsize * 8
    wrapped = value & ((1 << bits) - 1)
    if dt.kind == "i" and wrapped >> (bits - 1):
        wrapped -= 1 << bits
    return wrapped


def fitted(value: Any, dt: np.dtype) -> Any:
    """``value`` wrapped into ``dt`` when it is a Python int outside ``dt``'s range; else itself.

    A bool array meets an int in int64 (PyTorch's promotion), where only ints past int64's range
    need an answer: PyTorch's own, an error.
    """
    if type(value) is not int:
        return value
    bounds = _BOUNDS.get(dt)
    if bounds is not None:
        if bounds[0] <= value <= bounds[1]:
            return value
        return wrap_int(value, dt)
    if dt.kind == "b" and not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        check_parsable(value)
        raise RuntimeError(_BOOL_UINT64)
    return value


def wrapped_operands(exc: BaseException, operands: Sequence[Any]) -> list[Any]:
    """``operands`` with each out-of-range Python int wrapped into the arrays' dtype.

    Called with numpy's OverflowError ``exc``, which is raised again when no operand needed
    wrapping (the overflow came from something else).
    """
    arrays = [x for x in operands if isinstance(x, np.ndarray)]
    if not arrays:
        raise exc
    dt = arrays[0].dtype if len(arrays) == 1 else np.result_type(*arrays)
    result = [fitted(x, dt) for x in operands]
    if all(a is b for a, b in zip(result, operands)):
        raise exc
    return result


_WRAPPING_BODY = """\
    try:
        return _kernel({args})
    except OverflowError as _wrap_error:  # (a name no kernel parameter has: `as` unbinds it)
        {input}, {other} = _wrapped_operands(_wrap_error, ({input}, {other}))
    return _kernel({args})
"""


def wrapping(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """A binary kernel ``kernel(input, other, ...)`` that wraps out-of-range Python int operands."""
    params = list(inspect.signature(kernel).parameters.values())
    if [p.name for p in params[:2]] != ["input", "other"] or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        raise TypeError(f"wrapping() needs a kernel(input, other, ...) without defaults, not {kernel.__name__}")
    return with_signature(kernel, _WRAPPING_BODY, {"_wrapped_operands": wrapped_operands})

"""numpy kernels for pointwise ops. Each fills its preallocated ``out`` (see ``flambeau.ops``)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ._int_scalars import fitted, wrapped_operands, wrapping
from ._quiet import quiet

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None

_clamp_native = getattr(_C, "clamp", None)


def _is_int(x: Any) -> bool:
    kind = x.dtype.kind if isinstance(x, np.ndarray) else ("i" if isinstance(x, int) else "f")
    return kind in "iub"


def _check_int_divisor(input: Any, other: Any, out: np.ndarray) -> None:
    """Integer division by zero raises, as on PyTorch's CPU, before anything is written (an empty
    result divides nothing: no error)."""
    if out.size and _is_int(input) and _is_int(other) and np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


# casting="unsafe": a 0-d operand of a wider dtype of the same category (uint8 tensor + int32 0-d
# tensor) does not widen the result, as in PyTorch; numpy computes wider, then stores narrower.
@wrapping  # a Python int outside an integer tensor's dtype wraps around (see _int_scalars)
@quiet  # numpy's floating-point warnings (inf - inf, x / 0...): PyTorch gives inf/nan silently
def add(input, other, alpha, out):
    if alpha == 1:
        np.add(input, other, out=out, casting="unsafe")
    else:
        np.add(input, np.multiply(other, alpha), out=out, casting="unsafe")


@wrapping
@quiet
def sub(input, other, alpha, out):
    if alpha == 1:
        np.subtract(input, other, out=out, casting="unsafe")
    else:
        np.subtract(input, np.multiply(other, alpha), out=out, casting="unsafe")


@wrapping
@quiet
def mul(input, other, out):
    np.multiply(input, other, out=out, casting="unsafe")


@wrapping
@quiet
def div(input, other, rounding_mode, out):
    if rounding_mode is None:
        np.true_divide(input, other, out=out, casting="unsafe")
    elif out.dtype.kind in "iu":
        _check_int_divisor(input, other, out)
        quotient = np.floor_divide(input, other)
        if rounding_mode == "trunc":
            inexact = (np.remainder(input, other) != 0) & ((np.asarray(input) < 0) != (np.asarray(other) < 0))
            quotient = quotient + inexact
        np.copyto(out, quotient, casting="unsafe")
    elif rounding_mode == "trunc":
        np.trunc(np.true_divide(input, other), out=out, casting="unsafe")
    else:
        _float_floor_divide(input, other, out)


@wrapping
@quiet
def floor_divide(input, other, out):
    if out.dtype.kind in "iu":
        _check_int_divisor(input, other, out)
        np.floor_divide(input, other, out=out, casting="unsafe")
    else:
        _float_floor_divide(input, other, out)


def _float_floor_divide(input: Any, other: Any, out: np.ndarray) -> None:
    """Floating floor division as PyTorch (and Python) do it: from fmod, so that -1 // inf is -1
    and inf // 2 is NaN, where floor(a / b) gives -0 and inf. numpy's floor_divide is that algorithm;
    complex operands (refused by the meta functions) and half types go through float32/float64."""
    wd = out.dtype if out.dtype.kind == "f" and out.itemsize >= 4 else np.dtype(np.float32)
    if wd is out.dtype:
        np.floor_divide(input, other, out=out, casting="unsafe", dtype=wd)
    else:
        np.copyto(out, np.floor_divide(input, other, dtype=wd, casting="unsafe"), casting="unsafe")


@wrapping
@quiet
def remainder(input, other, out):
    if out.dtype.kind in "iu":
        _check_int_divisor(input, other, out)
    np.remainder(input, other, out=out, casting="unsafe")


@wrapping
@quiet
def fmod(input, other, out):
    if out.dtype.kind in "iu":
        _check_int_divisor(input, other, out)
    np.fmod(input, other, out=out, casting="unsafe")


@quiet
def pow(input, exponent, out):
    if out.dtype.kind in "iu" and isinstance(exponent, np.ndarray) and exponent.dtype.kind == "i" \
            and np.any(exponent < 0):
        # PyTorch's integer pow with a negative exponent tensor: 1 ** -n = 1, (-1) ** -n = +-1, else 0
        # (numpy refuses it). A negative Python-scalar exponent was refused by the meta function.
        base = np.asarray(input)
        negative = exponent < 0
        safe = np.power(base, np.where(negative, 0, exponent))
        odd = (exponent % 2) == 1
        at_negative = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
        np.copyto(out, np.where(negative, at_negative, safe), casting="unsafe")
        return
    np.power(input, exponent, out=out, casting="unsafe")


@quiet
def atan2(input, other, out):
    np.arctan2(input, other, out=out, casting="unsafe")


@quiet
def maximum(input, other, out):
    np.maximum(input, other, out=out, casting="unsafe")


@quiet
def minimum(input, other, out):
    np.minimum(input, other, out=out, casting="unsafe")


@quiet  # a float scalar past a half type's range becomes inf, quietly, as in PyTorch
def where(condition, input, other, out):
    np.copyto(out, np.where(condition, input, other), casting="unsafe")


def clamp(input, min, max, out):
    try:
        _clamp(input, min, max, out)
    except OverflowError:
        # A negative int bound of an unsigned tensor wraps (clamp(uint8, min=-5) clamps at 251, as in
        # PyTorch); the meta function refused any bound that does not fit.
        _clamp(input, fitted(min, out.dtype), fitted(max, out.dtype), out)


def _clamp(input, min, max, out):
    if isinstance(min, np.ndarray) or isinstance(max, np.ndarray):
        if min is None:
            np.minimum(input, max, out=out, casting="unsafe")
        elif max is None:
            np.maximum(input, min, out=out, casting="unsafe")
        else:
            # PyTorch: min(max(x, lo), hi), so hi wins when lo > hi.
            np.minimum(np.maximum(input, min), max, out=out, casting="unsafe")
        return
    # Number bounds: np.clip with both bounds has a vectorised loop; with one bound, as
    # np.maximum/np.minimum against a number, numpy loops ~3.5x slower (1M float32: 84 against
    # 286 us). A missing bound becomes the dtype's extreme, which clamps nothing. np.clip is
    # min(max(x, lo), hi) too (hi wins when lo > hi; NaN stays NaN).
    if out.dtype.kind not in "iu":  # floats (bfloat16's kind is 'V')
        min = -math.inf if min is None else min
        max = math.inf if max is None else max
        if _clamp_native is not None and input.dtype == out.dtype and _clamp_native(input, out, min, max):
            return  # threaded C++ pass (float32/float64, contiguous, bounds not NaN)
    else:  # np.clip takes an int outside the dtype without the OverflowError the retry needs
        min = np.iinfo(out.dtype).min if min is None else fitted(min, out.dtype)
        max = np.iinfo(out.dtype).max if max is None else fitted(max, out.dtype)
    np.clip(input, min, max, out=out, casting="unsafe")


@quiet
def lerp(input, end, weight, out):
    diff = np.subtract(end, input)
    weight = np.asarray(weight)
    # Two formulas, each exact at its end (PyTorch's choice): start + w*d below 0.5, end - (1-w)*d above.
    low = np.add(input, weight * diff)
    high = np.subtract(end, diff * (1 - weight))
    np.copyto(out, np.where(np.abs(weight) < 0.5, low, high), casting="unsafe")


def neg(input, out):
    np.negative(input, out=out)


def abs(input, out):
    np.absolute(input, out=out, casting="unsafe")


def sign(input, out):
    np.sign(input, out=out)
    if out.dtype.kind == "f" or out.dtype.name == "bfloat16":
        # PyTorch's sign is (0 < x) - (x < 0): 0 for NaN, where numpy's is NaN
        np.copyto(out, 0, where=np.isnan(out))


@quiet
def reciprocal(input, out):
    np.true_divide(1.0, input, out=out, casting="unsafe")


@quiet
def square(input, out):
    np.multiply(input, input, out=out, casting="unsafe")


@quiet  # decimals scale by 10**decimals first, which may overflow to inf (as PyTorch's does, quietly)
def round(input, decimals, out):
    if input.dtype.kind in "iub":
        np.copyto(out, input)
    else:
        np.round(input, decimals, out=out)


def _integer_identity(ufunc: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, out):
        if input.dtype.kind in "iub":
            np.copyto(out, input)
        else:
            ufunc(input, out=out)
    return kernel


@quiet
def frac(input, out):
    np.subtract(input, np.trunc(input), out=out)


def _float_unary(ufunc: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, out):
        if input.dtype.kind in "biu" and out.dtype.kind in "fc":
            # Computed in the result's dtype: numpy's own choice for int8/uint8/bool is float16.
            ufunc(input, out=out, dtype=out.dtype, casting="unsafe")
        else:
            ufunc(input, out=out, casting="unsafe")
    kernel.__name__ = ufunc.__name__
    return kernel


@quiet
def rsqrt(input, out):
    np.true_divide(1.0, np.sqrt(input, dtype=out.dtype if out.dtype.kind != "V" else None), out=out, casting="unsafe")


@quiet
def sigmoid(input, out):
    x = np.asarray(input, dtype=out.dtype) if input.dtype != out.dtype else input
    if x.dtype.kind == "c":  # the -|x| trick below is for real inputs only
        np.copyto(out, 1 / (1 + np.exp(-x)))
        return
    # exp of -|x| never overflows; the two branches meet at 0.
    e = np.exp(-np.abs(x))
    np.copyto(out, np.where(x >= 0, 1 / (1 + e), e / (1 + e)), casting="unsafe")


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def erf(input, out):
    np.copyto(out, np.asarray(_erf(input.astype(np.float64)), dtype=np.float64), casting="unsafe")


def erfc(input, out):
    np.copyto(out, np.asarray(_erfc(input.astype(np.float64)), dtype=np.float64), casting="unsafe")


def _bool_unary(ufunc: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, out):
        ufunc(input, out=out)
    return kernel


def _binary(ufunc: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, other, out):
        try:
            ufunc(input, other, out=out, casting="unsafe")
        except OverflowError as exc:  # a Python int outside an integer tensor's dtype wraps around
            input, other = wrapped_operands(exc, (input, other))
            ufunc(input, other, out=out, casting="unsafe")
    return kernel


KERNELS: dict[str, Callable[..., Any]] = {
    "add": add, "sub": sub, "mul": mul, "div": div, "floor_divide": floor_divide, "remainder": remainder,
    "fmod": fmod, "pow": pow, "atan2": atan2, "maximum": maximum, "minimum": minimum, "where": where,
    "clamp": clamp, "lerp": lerp, "neg": neg, "abs": abs, "sign": sign, "reciprocal": reciprocal,
    "square": square, "round": round, "frac": frac, "rsqrt": rsqrt, "sigmoid": sigmoid, "erf": erf, "erfc": erfc,
    "floor": _integer_identity(np.floor), "ceil": _integer_identity(np.ceil), "trunc": _integer_identity(np.trunc),
    "logical_not": _bool_unary(np.logical_not), "bitwise_not": _bool_unary(np.invert),
    "isnan": _bool_unary(np.isnan), "isinf": _bool_unary(np.isinf), "isfinite": _bool_unary(np.isfinite),
}
for _name, _ufunc in {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
}.items():
    KERNELS[_name] = quiet(_float_unary(_ufunc))  # log(0), sqrt(-1), exp(1000)... without numpy's warnings
for _name, _ufunc in {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
}.items():
    KERNELS[_name] = quiet(_binary(_ufunc))  # bfloat16 NaNs, floats past float32's range: no warnings

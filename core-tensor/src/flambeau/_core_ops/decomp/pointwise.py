"""Pointwise ops as formulas over the core tier's arithmetic, exp/log/sqrt/sin/cos/atan2/erf,
comparisons and ``where``. Where a textbook formula loses precision (``log(1 + x)`` for tiny
``x``), the formula used is the classical accurate one (Kahan's ``log1p`` and ``expm1``)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ... import _dtypes
from ..._tensor import Tensor
from . import decomposition
from ._util import LN2, LN10, as_dtype, is_complex, op, result_dtype, scalar_like


def _unary(name: str, uses: str) -> Callable[[Callable[[Tensor], Tensor]], Callable[[Tensor], Tensor]]:
    """Register ``formula`` for op ``name``, applied to the input cast to the op's result dtype."""
    def register(formula: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
        def composite(x: Tensor) -> Tensor:
            return formula(as_dtype(x, result_dtype(name, x)))
        composite.__doc__ = formula.__doc__
        decomposition(name, uses)(composite)
        return formula
    return register


def _where(cond: Tensor, a: Any, b: Any) -> Tensor:
    """``where``, a Python number beside a tensor passed as a 0-d tensor of the dtype it promotes
    to (the same result: the CPU's kernel takes ~25x longer on a Python scalar operand at 1M)."""
    if isinstance(a, Tensor) != isinstance(b, Tensor):
        from ...ops.meta import binary_result_type

        tensor, number = (a, b) if isinstance(a, Tensor) else (b, a)
        if type(number) in (bool, int, float, complex):
            number = scalar_like(number, tensor, binary_result_type(tensor, number))
            a, b = (tensor, number) if isinstance(a, Tensor) else (number, tensor)
    return op("where")(cond, a, b)


# -- exponentials and logarithms --------------------------------------------------------

@_unary("exp2", "exp mul")
def _exp2(x: Tensor) -> Tensor:
    return op("exp")(x * LN2)


@_unary("expm1", "exp sub mul div log eq where abs")
def _expm1(x: Tensor) -> Tensor:
    """Kahan: ``(u - 1) * x / log(u)`` with ``u = exp(x)`` is exact to a few ulps, also near 0."""
    u = op("exp")(x)
    if is_complex(x):
        return u - 1
    um1 = u - 1
    ratio = um1 * x / op("log")(u)
    # u == 1: x is tiny, expm1(x) == x; u == 0 (x very negative): -1; u infinite: u
    return _where(u == 1, x, _where(um1 == -1, -1.0, _where(op("abs")(u) == math.inf, u, ratio)))


@_unary("log1p", "add sub mul div log eq where")
def _log1p(x: Tensor) -> Tensor:
    """Kahan: ``log(u) * x / (u - 1)`` with ``u = 1 + x`` recovers the bits ``1 + x`` rounds away."""
    u = x + 1
    if is_complex(x):
        return op("log")(u)
    logu = op("log")(u)
    return _where(u == 1, x, _where(u == math.inf, u, logu * x / (u - 1)))


def _real_scale(z: Tensor, factor: float) -> Tensor:
    """``z * factor`` for a real ``factor``; for complex ``z`` part by part (numpy's complex product
    would compute ``-inf * 0`` in the imaginary part: NaN)."""
    if not is_complex(z):
        return z * factor
    return op("view_as_complex")(op("view_as_real")(z) * factor)


@_unary("log2", "log mul view_as_real view_as_complex")
def _log2(x: Tensor) -> Tensor:
    return _real_scale(op("log")(x), 1 / LN2)


@_unary("log10", "log mul view_as_real view_as_complex")
def _log10(x: Tensor) -> Tensor:
    return _real_scale(op("log")(x), 1 / LN10)


@_unary("sigmoid", "exp neg add div")
def _sigmoid(x: Tensor) -> Tensor:
    return 1 / (op("exp")(-x) + 1)


@_unary("rsqrt", "sqrt div")
def _rsqrt(x: Tensor) -> Tensor:
    return 1 / op("sqrt")(x)


@_unary("reciprocal", "div")
def _reciprocal(x: Tensor) -> Tensor:
    return 1 / x


@_unary("square", "mul")
def _square(x: Tensor) -> Tensor:
    return x * x


# -- trigonometric and hyperbolic -------------------------------------------------------

@_unary("tan", "sin cos div")
def _tan(x: Tensor) -> Tensor:
    return op("sin")(x) / op("cos")(x)


@_unary("sinh", "expm1 exp neg sub mul")
def _sinh(x: Tensor) -> Tensor:
    if is_complex(x):
        return (op("exp")(x) - op("exp")(-x)) * 0.5
    return (op("expm1")(x) - op("expm1")(-x)) * 0.5  # exact near 0, where exp(x) - exp(-x) cancels


@_unary("cosh", "exp neg add mul")
def _cosh(x: Tensor) -> Tensor:
    return (op("exp")(x) + op("exp")(-x)) * 0.5


@_unary("tanh", "expm1 exp abs mul add sub div sign eq where")
def _tanh(x: Tensor) -> Tensor:
    if is_complex(x):
        e = op("exp")(x * 2)
        return (e - 1) / (e + 1)
    t = op("expm1")(op("abs")(x) * 2)  # tanh|x| = t / (t + 2), exact near 0
    return op("sign")(x) * _where(t == math.inf, 1.0, t / (t + 2))


def _complex_asin(z: Tensor) -> Tensor:
    iz = z * 1j
    return op("log")(iz + op("sqrt")(1 - z * z)) * -1j


@_unary("asin", "atan2 sqrt sub add mul log")
def _asin(x: Tensor) -> Tensor:
    if is_complex(x):
        return _complex_asin(x)
    return op("atan2")(x, op("sqrt")((1 - x) * (1 + x)))


@_unary("acos", "atan2 sqrt sub add mul log")
def _acos(x: Tensor) -> Tensor:
    if is_complex(x):
        return math.pi / 2 - _complex_asin(x)
    return op("atan2")(op("sqrt")((1 - x) * (1 + x)), x)


@_unary("atan", "atan2 log sub add div mul")
def _atan(x: Tensor) -> Tensor:
    if is_complex(x):
        return (op("log")(1 + x * 1j) - op("log")(1 - x * 1j)) * -0.5j
    return op("atan2")(x, 1.0)


@_unary("asinh", "abs mul add sqrt div log1p log sign gt where")
def _asinh(x: Tensor) -> Tensor:
    if is_complex(x):
        return op("log")(x + op("sqrt")(x * x + 1))
    a = op("abs")(x)
    big = a > 2.0 ** 28  # a * a would overflow; there asinh(a) = log(2a)
    small = op("log1p")(a + a * a / (op("sqrt")(a * a + 1) + 1))
    return op("sign")(x) * _where(big, op("log")(a) + LN2, small)


@_unary("acosh", "sub add mul sqrt log gt where")
def _acosh(x: Tensor) -> Tensor:
    if is_complex(x):
        return op("log")(x + op("sqrt")(x + 1) * op("sqrt")(x - 1))
    big = x > 2.0 ** 28
    return _where(big, op("log")(x) + LN2, op("log")(x + op("sqrt")((x - 1) * (x + 1))))


@_unary("atanh", "sub mul div log1p log add")
def _atanh(x: Tensor) -> Tensor:
    if is_complex(x):
        return (op("log")(1 + x) - op("log")(1 - x)) * 0.5
    return op("log1p")(x * 2 / (1 - x)) * 0.5


@_unary("deg2rad", "mul")
def _deg2rad(x: Tensor) -> Tensor:
    return x * (math.pi / 180)


@_unary("rad2deg", "mul")
def _rad2deg(x: Tensor) -> Tensor:
    return x * (180 / math.pi)


# -- rounding and sign ------------------------------------------------------------------

@_unary("ceil", "floor neg")
def _ceil(x: Tensor) -> Tensor:
    return -op("floor")(-x) if x._dtype.is_floating_point else x


@_unary("trunc", "floor neg lt where")
def _trunc(x: Tensor) -> Tensor:
    if not x._dtype.is_floating_point:
        return x
    return _where(x < 0, -op("floor")(-x), op("floor")(x))


@_unary("frac", "trunc sub")
def _frac(x: Tensor) -> Tensor:
    return x - op("trunc")(x)


@_unary("sign", "gt lt to_dtype sub abs div eq where")
def _sign(x: Tensor) -> Tensor:
    if x._dtype.name == "bool":
        return x
    if is_complex(x):
        return _sgn(x)
    return (x > 0).to(x._dtype) - (x < 0).to(x._dtype)  # NaN: 0, as PyTorch


@_unary("sgn", "gt lt to_dtype sub abs div eq where")
def _sgn(x: Tensor) -> Tensor:
    if not is_complex(x):
        return _sign(x)
    a = op("abs")(x)
    return _where(a == 0, 0j, x / _where(a == 0, 1.0, a))


@decomposition("signbit", "lt eq div bitwise_and bitwise_or")
def _signbit(x: Tensor) -> Tensor:
    if not x._dtype.is_floating_point:
        return x < 0
    return (x < 0) | ((x == 0) & ((1 / x) < 0))  # -0.0: 1 / -0.0 is -inf


@decomposition("angle", "atan2 view_as_real select lt ne where to_dtype")
def _angle(x: Tensor) -> Tensor:
    if is_complex(x):
        parts = op("view_as_real")(x)
        return op("atan2")(parts.select(-1, 1), parts.select(-1, 0))
    dt = result_dtype("angle", x)
    x = as_dtype(x, dt)
    return _where(x != x, x, _where(x < 0, scalar_like(math.pi, x), scalar_like(0.0, x)))


# -- classification -------------------------------------------------------------------

@decomposition("isnan", "ne")
def _isnan(x: Tensor) -> Tensor:
    return x != x


@decomposition("isinf", "abs eq")
def _isinf(x: Tensor) -> Tensor:
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        return op("ne")(x, x)  # all False
    return op("abs")(x) == math.inf


@decomposition("isposinf", "eq ne")
def _isposinf(x: Tensor) -> Tensor:
    return x == math.inf if x._dtype.is_floating_point else x != x


@decomposition("isneginf", "eq ne")
def _isneginf(x: Tensor) -> Tensor:
    return x == -math.inf if x._dtype.is_floating_point else x != x


@decomposition("isfinite", "abs lt eq")
def _isfinite(x: Tensor) -> Tensor:
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        return x == x
    return op("abs")(x) < math.inf


@decomposition("isreal", "view_as_real select eq ne bitwise_or")
def _isreal(x: Tensor) -> Tensor:
    if not is_complex(x):
        return (x == x) | (x != x)  # all True, NaN included
    return op("view_as_real")(x).select(-1, 1) == 0


# -- logical --------------------------------------------------------------------------

def _truth(x: Any) -> Any:
    return op("ne")(x, 0) if isinstance(x, Tensor) else bool(x)


@decomposition("logical_not", "eq")
def _logical_not(x: Tensor) -> Tensor:
    return op("eq")(x, 0)


@decomposition("logical_and", "ne bitwise_and")
def _logical_and(a: Tensor, b: Any) -> Tensor:
    return op("bitwise_and")(_truth(a), _truth(b))


@decomposition("logical_or", "ne bitwise_or")
def _logical_or(a: Tensor, b: Any) -> Tensor:
    return op("bitwise_or")(_truth(a), _truth(b))


@decomposition("logical_xor", "ne bitwise_xor")
def _logical_xor(a: Tensor, b: Any) -> Tensor:
    return op("bitwise_xor")(_truth(a), _truth(b))


# -- binary arithmetic ----------------------------------------------------------------

def _binary_operands(name: str, a: Any, b: Any) -> tuple[Any, Any]:
    dt = result_dtype(name, a, b)
    return as_dtype(a, dt), as_dtype(b, dt)


def _bool_or_clamp(a: Tensor, b: Tensor, logical: str, bound: int) -> Tensor:
    """maximum/minimum as one core-tier pass: ``clamp`` with the other operand as the bound
    (``bound`` 1: its min, 2: its max). clamp propagates a NaN of the element or of the bound, as
    maximum/minimum do, and keeps integer dtypes. bool, which clamp does not take (PyTorch refuses
    it), is logical OR / AND."""
    if a._dtype is _dtypes.bool and b._dtype is _dtypes.bool:
        return op(logical)(a, b)
    return op("clamp")(a, b, None) if bound == 1 else op("clamp")(a, None, b)


@decomposition("maximum", "bitwise_or clamp")
def _maximum(a: Tensor, b: Tensor) -> Tensor:
    return _bool_or_clamp(a, b, "bitwise_or", 1)


@decomposition("minimum", "bitwise_and clamp")
def _minimum(a: Tensor, b: Tensor) -> Tensor:
    return _bool_or_clamp(a, b, "bitwise_and", 2)


@decomposition("fmax", "ge ne bitwise_or where to_dtype")
def _fmax(a: Tensor, b: Tensor) -> Tensor:
    a, b = _binary_operands("fmax", a, b)
    return _where((a >= b) | (b != b), a, b)  # a NaN loses to a number


@decomposition("fmin", "le ne bitwise_or where to_dtype")
def _fmin(a: Tensor, b: Tensor) -> Tensor:
    a, b = _binary_operands("fmin", a, b)
    return _where((a <= b) | (b != b), a, b)


@decomposition("clamp_min", "clamp")
def _clamp_min(x: Tensor, low: Any) -> Tensor:
    return op("clamp")(x, low, None)


@decomposition("clamp_max", "clamp")
def _clamp_max(x: Tensor, high: Any) -> Tensor:
    return op("clamp")(x, None, high)


@decomposition("floor_divide", "div")
def _floor_divide(a: Tensor, b: Any) -> Tensor:
    return op("div")(a, b, rounding_mode="floor")


def _infinite_divisor(a: Any, b: Any) -> Any:
    """Where a finite ``a`` meets an infinite ``b`` (there ``a - q * b`` is NaN, the result is not)."""
    if not (a._dtype.is_floating_point if isinstance(a, Tensor) else isinstance(a, float)):
        return None
    b_t = b if isinstance(b, Tensor) else scalar_like(b, a)
    a_t = a if isinstance(a, Tensor) else scalar_like(a, b_t)
    return (op("abs")(b_t) == math.inf) & (op("abs")(a_t) < math.inf), a_t, b_t


@decomposition("remainder", "div mul sub abs eq lt ne bitwise_and bitwise_xor where to_dtype")
def _remainder(a: Tensor, b: Any) -> Tensor:
    a, b = _binary_operands("remainder", a, b)
    r = a - op("div")(a, b, rounding_mode="floor") * b
    inf = _infinite_divisor(a, b)
    if inf is None:
        return r
    mask, a_t, b_t = inf
    # Python's rule: x % inf is x when their signs agree (or x is 0), else inf itself
    differ = ((a_t < 0) ^ (b_t < 0)) & (a_t != 0)
    return _where(mask, _where(differ, b_t, a_t), r)


@decomposition("fmod", "div mul sub abs eq lt bitwise_and where to_dtype")
def _fmod(a: Tensor, b: Any) -> Tensor:
    a, b = _binary_operands("fmod", a, b)
    r = a - op("div")(a, b, rounding_mode="trunc") * b
    inf = _infinite_divisor(a, b)
    if inf is None:
        return r
    mask, a_t, _ = inf
    return _where(mask, a_t, r)  # fmod(x, inf) is x


@decomposition("copysign", "abs signbit where neg to_dtype")
def _copysign(a: Tensor, b: Any) -> Tensor:
    a, b = _binary_operands("copysign", a, b)
    if not isinstance(b, Tensor):
        b = scalar_like(b, a)
    magnitude = op("abs")(a)
    return _where(op("signbit")(b), -magnitude, magnitude)


@decomposition("heaviside", "eq gt where to_dtype")
def _heaviside(x: Tensor, values: Tensor) -> Tensor:
    x, values = _binary_operands("heaviside", x, values)
    return _where(x == 0, values, (x > 0).to(x._dtype))


@decomposition("hypot", "mul add sqrt abs eq where to_dtype")
def _hypot(a: Tensor, b: Tensor) -> Tensor:
    a, b = _binary_operands("hypot", a, b)
    r = op("sqrt")(a * a + b * b)
    inf = (op("abs")(a) == math.inf) | (op("abs")(b) == math.inf)  # hypot(inf, nan) is inf
    return _where(inf, math.inf, r)


@decomposition("logaddexp", "maximum sub abs neg exp log1p add eq where to_dtype")
def _logaddexp(a: Tensor, b: Tensor) -> Tensor:
    a, b = _binary_operands("logaddexp", a, b)
    m = op("maximum")(a, b)
    r = m + op("log1p")(op("exp")(-op("abs")(a - b)))
    return _where(a == b, a + LN2, r)  # both infinite of one sign: a - b is NaN


@decomposition("logaddexp2", "maximum sub abs neg exp log1p mul add eq where to_dtype")
def _logaddexp2(a: Tensor, b: Tensor) -> Tensor:
    a, b = _binary_operands("logaddexp2", a, b)
    m = op("maximum")(a, b)
    r = m + op("log1p")(op("exp")(-op("abs")(a - b) * LN2)) * (1 / LN2)
    return _where(a == b, a + 1, r)


@decomposition("xlogy", "eq ne bitwise_and log mul where to_dtype")
def _xlogy(x: Any, y: Any) -> Tensor:
    like = x if isinstance(x, Tensor) else y
    dt = result_dtype("xlogy", x, y)
    x = as_dtype(x, dt) if isinstance(x, Tensor) else scalar_like(x, like, dt)
    y = as_dtype(y, dt) if isinstance(y, Tensor) else scalar_like(y, like, dt)
    return _where((x == 0) & (y == y), 0.0, x * op("log")(y))  # 0 * log(0) is 0; NaN in y stays


@decomposition("lerp", "sub mul add abs lt where to_dtype")
def _lerp(start: Tensor, end: Tensor, weight: Any) -> Tensor:
    dt = result_dtype("lerp", start, end, weight)
    start, end, weight = as_dtype(start, dt), as_dtype(end, dt), as_dtype(weight, dt)
    diff = end - start
    if not isinstance(weight, Tensor):  # PyTorch's two formulas, each exact at its end
        return start + diff * weight if abs(weight) < 0.5 else end - diff * (1 - weight)
    return _where(op("abs")(weight) < 0.5, start + diff * weight, end - diff * (1 - weight))


@decomposition("addcmul", "mul add to_dtype")
def _addcmul(x: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    dt = result_dtype("addcmul", x, t1, t2, value)
    return as_dtype(x, dt) + as_dtype(t1, dt) * as_dtype(t2, dt) * value


@decomposition("addcdiv", "div mul add to_dtype")
def _addcdiv(x: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    dt = result_dtype("addcdiv", x, t1, t2, value)
    return as_dtype(x, dt) + as_dtype(t1, dt) / as_dtype(t2, dt) * value


@decomposition("nan_to_num", "ne eq where clamp")
def _nan_to_num(x: Tensor, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    if is_complex(x):
        parts = op("view_as_real")(x)
        fixed = _nan_to_num(parts, nan, posinf, neginf)
        return op("view_as_complex")(fixed.contiguous())
    if not x._dtype.is_floating_point:
        return x.clone()
    info = np.finfo(x._dtype.numpy_dtype) if x._dtype.name != "bfloat16" else None
    big = float(info.max) if info is not None else 3.3895313892515355e38
    if posinf is None and neginf is None:
        # the default replacements are the dtype's extremes: every finite x already lies within them,
        # so one clamp replaces both infinities (it keeps NaN), then one select the NaNs (3 passes, not 5)
        return _where(x != x, nan, op("clamp")(x, -big, big))
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    return _where(x != x, nan, _where(x == math.inf, posinf, _where(x == -math.inf, neginf, x)))


@decomposition("conj_physical", "clone view_as_real select mul")
def _conj_physical(x: Tensor) -> Tensor:
    result = x.clone()
    if is_complex(x):
        imag = op("view_as_real")(result).select(-1, 1)
        imag.mul_(-1)
    return result


@decomposition("complex", "view_as_complex view_as_real select copy")
def _complex(real: Tensor, imag: Tensor) -> Tensor:
    from ..._creation import empty
    from ...ops.meta import broadcast_shapes

    dt = result_dtype("complex", real, imag)
    out = empty(broadcast_shapes(real._data.shape, imag._data.shape), dtype=dt, device=real._device)
    parts = op("view_as_real")(out)
    parts.select(-1, 0).copy_(real)
    parts.select(-1, 1).copy_(imag)
    return out


@decomposition("linalg_cross", "select unsqueeze mul sub cat expand to_dtype")
def _linalg_cross(a: Tensor, b: Tensor, dim: int = -1) -> Tensor:
    from ...ops._registry import OPS
    from ...ops.meta import wrap_dim

    shape, dt = OPS["linalg_cross"].meta(a, b, dim)
    a, b = as_dtype(a.expand(shape), dt), as_dtype(b.expand(shape), dt)
    d = wrap_dim(dim, len(shape))
    x = [a.select(d, i) for i in range(3)]
    y = [b.select(d, i) for i in range(3)]
    parts = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]]
    return op("cat")([p.unsqueeze(d) for p in parts], d)

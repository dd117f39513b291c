"""Special functions as formulas over the core tier's erf, exp, log, sin and arithmetic (``lgamma``:
Stirling's series after the recurrence, with the reflection formula for x <= 0).

``erfc`` is ``1 - erf(x)`` where that loses nothing (``x`` below a threshold: the result is at
least ~2e-5, so the cancellation costs at most a few digits of float64, 2e-12 relative), and
past it a formula for the right tail, whose values ``1 - erf`` would round away:

- float64: Laplace's continued fraction ``erfc(x) = exp(-x^2) / (sqrt(pi) F(x))`` with
  ``F = x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))``, 24 levels, for ``x >= 3``
  (relative error below 7e-15 there, against scipy's erfc);
- float32 and the half types (computed in float32): the Chebyshev-fitted
  ``t exp(-x^2 + P(t))``, ``t = 1 / (1 + x / 2)``, of Numerical Recipes (W. H. Press et al.,
  2nd ed., section 6.2: fractional error below 1.2e-7 in exact arithmetic), for ``x >= 0.5``;
  in float32 arithmetic within 2.2e-6 relative for ``x < 4`` (a correctly rounded float32 erfc
  of the float32 input is within 1e-6 of the true value there) and within 1.6e-5 out to where
  erfc underflows, the error of ``exp(-x^2)`` with ``x^2`` rounded.
"""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype, scalar_like

#: P(t)'s coefficients, constant term first (Numerical Recipes' erfcc)
_NR = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
       1.48851587, -0.82215223, 0.17087277)
_CF_FROM, _CF_DEPTH = 3.0, 24
_NR_FROM = 0.5


def _tail_float64(x: Tensor) -> Tensor:
    f = x
    for k in range(_CF_DEPTH, 0, -1):
        f = x + (k / 2) / f
    return op("exp")(-(x * x)) / (f * math.sqrt(math.pi))


def _tail_float32(x: Tensor) -> Tensor:
    t = 1 / (x * 0.5 + 1)
    p = t * _NR[-1]
    for c in _NR[-2:0:-1]:
        p = (p + c) * t
    return t * op("exp")(p + _NR[0] - x * x)


@decomposition("erfc", "erf sub lt where mul add div neg exp to_dtype")
def _erfc(x: Tensor) -> Tensor:
    from ... import _dtypes

    dt = result_dtype("erfc", x)
    wide = dt is _dtypes.float64
    work = dt if wide else _dtypes.float32
    x = as_dtype(x, work)
    start = _CF_FROM if wide else _NR_FROM
    near = op("lt")(x, start)
    # the tail formula on x moved into its range where x is below it (no 0-division, no overflow)
    tail_x = op("where")(near, scalar_like(start, x), x)
    tail = _tail_float64(tail_x) if wide else _tail_float32(tail_x)
    return op("where")(near, 1 - op("erf")(x), tail)


def _half_to_float32(x: Tensor, dt: Any) -> Tensor:
    """``x`` in ``dt``, or in float32 for the half types (computed there, rounded once at the end)."""
    from ... import _dtypes

    return as_dtype(x, _dtypes.float32 if dt in (_dtypes.float16, _dtypes.bfloat16) else dt)


@decomposition("special_ndtr", "erfc mul to_dtype")
def _ndtr(x: Tensor) -> Tensor:
    """The standard normal CDF as ``erfc(-x / sqrt(2)) / 2``: accurate in both tails."""
    x = _half_to_float32(x, result_dtype("special_ndtr", x))
    return op("erfc")(x * -math.sqrt(0.5)) * 0.5


@decomposition("sinc", "mul sin div eq where to_dtype")
def _sinc(x: Tensor) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0 (PyTorch's formula, also for complex)."""
    x = _half_to_float32(x, result_dtype("sinc", x))
    px = x * math.pi
    zero = op("eq")(x, 0)
    return op("where")(zero, scalar_like(1, x), op("sin")(px) / op("where")(zero, scalar_like(1, x), px))


@decomposition("special_entr", "gt eq lt log mul neg where to_dtype")
def _entr(x: Tensor) -> Tensor:
    """``-x log x`` for x > 0, 0 at 0, -inf below, NaN for NaN."""
    x = _half_to_float32(x, result_dtype("special_entr", x))
    positive = op("gt")(x, 0)
    safe = op("where")(positive, x, scalar_like(1, x))
    inner = op("where")(op("lt")(x, 0), scalar_like(-math.inf, x), x)  # x == 0 keeps 0, NaN keeps NaN
    return op("where")(positive, -(safe * op("log")(safe)), op("where")(op("eq")(x, 0), scalar_like(0, x), inner))


@decomposition("special_xlog1py", "log1p mul eq ne bitwise_and where to_dtype")
def _xlog1py(x: Any, y: Any) -> Tensor:
    """``x * log1p(y)``, 0 where x is 0 and y is not NaN (PyTorch's rule)."""
    dt = result_dtype("special_xlog1py", x, y)
    like = x if isinstance(x, Tensor) else y
    x = _half_to_float32(x if isinstance(x, Tensor) else scalar_like(x, like, dt), dt)
    y = _half_to_float32(y if isinstance(y, Tensor) else scalar_like(y, like, dt), dt)
    product = x * op("log1p")(y)
    return op("where")(op("eq")(x, 0) & op("eq")(y, y), scalar_like(0, product), product)


@decomposition("logit", "clamp sub div log to_dtype")
def _logit(x: Tensor, eps: Any = None) -> Tensor:
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    x = _half_to_float32(x, result_dtype("logit", x, eps))
    if eps is not None:
        x = op("clamp")(x, eps, 1 - eps)
    return op("log")(x / (1 - x))


@decomposition("ldexp", "pow mul to_dtype")
def _ldexp(x: Tensor, other: Tensor) -> Tensor:
    """``x * 2 ** other`` (a power of two by ``pow``: exact for integral exponents)."""
    dt = result_dtype("ldexp", x, other)
    work = _half_to_float32(other, dt)
    return _half_to_float32(x, dt) * op("pow")(scalar_like(2.0, work), work)


@decomposition("float_power", "pow to_dtype")
def _float_power(x: Any, exponent: Any) -> Tensor:
    """``pow`` in double precision (float64, or complex128 when either side is complex)."""
    dt = result_dtype("float_power", x, exponent)
    if not isinstance(x, Tensor):
        x = scalar_like(x, exponent, dt)
    return op("pow")(as_dtype(x, dt), as_dtype(exponent, dt))


#: Stirling's series for log Gamma: the coefficients B_{2k} / (2k (2k - 1)) of z^-(2k-1), k = 1..7
#: (Abramowitz and Stegun 6.1.41); from z >= 10 the first omitted term is below 2e-16.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_LGAMMA_SHIFT = 10


def _lgamma_positive(z: Tensor) -> Tensor:
    """log Gamma(z) for z > 0: below 10 shifted to ``z + 10`` by ``Gamma(z + 1) = z Gamma(z)`` (the
    product of the ten factors taken out, its log subtracted), and Stirling's series there."""
    small = op("lt")(z, _LGAMMA_SHIFT)
    one = scalar_like(1, z)
    product = op("where")(small, z, one)
    for k in range(1, _LGAMMA_SHIFT):
        product = product * op("where")(small, z + k, one)
    w = op("where")(small, z + _LGAMMA_SHIFT, z)
    inv, inv2 = 1 / w, 1 / (w * w)
    series = inv * _STIRLING[-1]
    for c in _STIRLING[-2::-1]:
        series = series * inv2 + c * inv
    stirling = (w - 0.5) * op("log")(w) - w + 0.5 * math.log(2 * math.pi) + series
    return stirling - op("log")(product)


@decomposition("lgamma", "floor round eq le lt abs mul add sub div log sin where to_dtype")
def _lgamma(x: Tensor) -> Tensor:
    """``log |Gamma(x)|``: Stirling's series after the recurrence for x > 0, the reflection
    ``log(pi / |sin(pi x)|) - lgamma(1 - x)`` below; +inf at 0 and the negative integers, and at
    both infinities. Computed in float64, or float32 for float32 and the half types (float32 is
    within ~3e-6 absolute of the true value where the result is near 0, at 1 and 2)."""
    x = _half_to_float32(as_dtype(x, result_dtype("lgamma", x)), result_dtype("lgamma", x))
    positive = op("lt")(scalar_like(0, x), x)
    z = op("where")(positive, x, 1 - x)  # > 0 everywhere but at the poles and NaN
    pole = op("le")(x, 0) & op("eq")(op("floor")(x), x)  # includes -inf
    z = op("where")(pole | op("eq")(op("abs")(x), math.inf), scalar_like(1, x), z)
    base = _lgamma_positive(z)
    # |sin(pi x)| from x - round(x) in [-1/2, 1/2]: exact (x - floor(x) rounds near the negative
    # integers: -1e-5 became 0.99999, 3e-12 off in sin); 1/2 where the reflection is not taken, so
    # that its unused branch has finite gradients (``where`` multiplies them by 0)
    frac = op("where")(positive | pole, scalar_like(0.5, x), x - op("round")(x))
    reflected = math.log(math.pi) - op("log")(op("abs")(op("sin")(frac * math.pi))) - base
    result = op("where")(positive, base, reflected)
    return op("where")(pole | op("eq")(op("abs")(x), math.inf), scalar_like(math.inf, x), result)

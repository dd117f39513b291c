"""The error function's inverse and the normal distribution's tails as formulas over the core tier:
``erfinv``, ``special_ndtri``, ``special_log_ndtr``, ``special_erfcx``.

All four rest on the right tail of ``erfc`` written without its ``exp(-y^2)`` factor, so that
nothing underflows: ``log erfc(y) = -y^2 - log(sqrt(pi) F(y))`` with Laplace's continued fraction
``F(y) = y + (1/2) / (y + 1 / (y + (3/2) / ...))`` in float64 (48 levels: within 4e-16 relative
of scipy's ``log(erfc)`` from ``y = 2``), and Numerical Recipes' Chebyshev fit
``erfc(y) = t exp(-y^2 + P(t))``, ``t = 1 / (1 + y / 2)`` (fractional error below 1.2e-7 for every
``y >= 0``) in float32 and the half types (which compute in float32).

- ``erfinv`` and ``ndtri`` start from M. Giles' single-precision approximation ("Approximating
  the erfinv function", GPU Computing Gems Jade, 2011: two polynomials in
  ``w = -log((1 - x)(1 + x))``, relative error ~1e-7 for ``w < 16``), or, past ``w = 16``, from
  the tail's leading asymptotics ``y^2 = L - log(pi L) / 2``, ``L = -log c``. In float64 they are
  refined by Newton steps: on ``erf(y) = x`` for ``|x| <= 1/2`` and on
  ``log erfc(y) = log(1 - |x|)`` above (``1 - |x|`` is exact there; in the log form the step is
  nearly linear, so that three steps converge from anywhere in the tail, and the tail's accuracy
  in ``y`` is ~1e-16 relative). ``ndtri(p)`` is ``-sqrt(2) erfcinv(2p)``, computed from ``2p``
  or ``2 - 2p`` (both exact) in the tails, so that ``p`` of 1e-300 keeps all its digits; float32
  computes in float32 with Giles' polynomials in the centre and log-Newton steps on the fit in
  the far tails.
- ``log_ndtr(x)`` is ``log1p(-erfc(x / sqrt(2)) / 2)`` for ``x >= 0``, that ``erfc`` past
  ``y = 2`` (float64) or ``0.5`` (float32) as ``exp(-x^2 / 2)`` from the exact square of ``x``
  (Dekker's splitting: ``x / sqrt 2`` is rounded, and its square would cost ``x^2 eps`` relative,
  the 3e-14 by which scipy's own log_ndtr is off from x = 10) times the tail formula; below 0
  ``log(erfc(-x / sqrt(2)) / 2)``, the log from the tail formula past the same points:
  ``x = -1e5`` gives ``-5e9`` with no underflow.
- ``erfcx(x) = exp(x^2) erfc(x)`` is ``1 / (sqrt(pi) F(x))`` (float64, ``x >= 2``) or
  ``t exp(P(t))`` (float32, ``x >= 0.5``); below, ``exp(x^2) erfc(x)`` with ``x^2`` carried as
  an exact sum of two floats, so that ``exp(x^2)`` of ``x = -26`` is not off by the 4e-14
  relative that rounding ``x^2 = 676`` costs (scipy's erfcx is, by 3e-14 at ``x = -24``); it
  overflows to inf below ``x = -26.6`` (float64), as scipy's does.
- ``erfinv(-0)`` is ``-0``, as PyTorch's (scipy's is ``+0``).

Measured against scipy (float64; mpmath where scipy is off) on the cpu and example backends:
erfinv and ndtri within 1.4e-15 relative, log_ndtr 1.1e-14 (example: ``1 - erf`` as ``erfc``
below ``y = 2``; 4e-15 with a native erfc), erfcx 4e-16 of mpmath. float32 against scipy's float64
rounded: erfinv and ndtri within 3 ulp (Giles' polynomials), log_ndtr and erfcx within 5
(the fit's 1.2e-7). The accuracy in the centre (``|y| < 2``) is the backend's ``erf``/``erfc``'s.
"""
from __future__ import annotations

import math
from typing import Any

from ... import _dtypes
from ..._tensor import Tensor
from . import decomposition
from ._util import LN2, op, result_dtype, scalar_like
from .special import _NR, _half_to_float32

_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI
#: where the tail formula takes over from ``log(erfc)``: float64 (continued fraction), float32 (fit)
_TAIL_FROM = {True: 2.0, False: 0.5}
_CF_DEPTH = 48
#: Giles' single-precision polynomials, constant term first: in ``w - 2.5`` for ``w < 5``, in
#: ``sqrt(w) - 3`` for ``5 <= w < 16``
_GILES_CENTRE = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
                 -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
               0.00134934322, 0.000100950558, -0.000200214257)


def _where(cond: Tensor, a: Any, b: Any) -> Tensor:
    like = a if isinstance(a, Tensor) else b
    a = a if isinstance(a, Tensor) else scalar_like(a, like)
    b = b if isinstance(b, Tensor) else scalar_like(b, like)
    return op("where")(cond, a, b)


def _poly(coeffs: tuple[float, ...], t: Tensor) -> Tensor:
    """Horner's rule, constant term first."""
    p = t * coeffs[-1] + coeffs[-2]
    for c in coeffs[-3::-1]:
        p = p * t + c
    return p


def _wide(x: Tensor) -> bool:
    return x._dtype is _dtypes.float64


def _laplace_cf(y: Tensor) -> Tensor:
    """``F(y)`` with ``erfc(y) = exp(-y^2) / (sqrt(pi) F(y))``, for ``y >= 2``."""
    f = y
    for k in range(_CF_DEPTH, 0, -1):
        f = y + (k / 2) / f
    return f


def _log_erfc_tail(y: Tensor, y2: Tensor) -> Tensor:
    """``log erfc(y)`` for ``y`` at or past ``_TAIL_FROM`` (``y2`` is ``y^2``, maybe computed more
    accurately by the caller)."""
    if _wide(y):
        return -y2 - op("log")(_laplace_cf(y) * _SQRT_PI)
    t = 1 / (y * 0.5 + 1)
    return op("log")(t) + _poly(_NR, t) - y2


def _log_erfc(y: Tensor, y2: Tensor | None = None) -> Tensor:
    """``log erfc(y)`` for ``y >= 0`` (and NaN), with no underflow in the right tail."""
    start = _TAIL_FROM[_wide(y)]
    near = op("lt")(y, start)
    tail_y = _where(near, start, y)
    tail_y2 = tail_y * tail_y if y2 is None else _where(near, start * start, y2)
    return _where(near, op("log")(op("erfc")(_where(near, y, 0.0))), _log_erfc_tail(tail_y, tail_y2))


# -- erfinv and ndtri ---------------------------------------------------------------------

def _erfinv_centre(x: Tensor) -> Tensor:
    """``erfinv(x)`` for ``|x| <= 1/2``: Giles' polynomial, then in float64 two Newton steps on erf."""
    w = -op("log")((1 - x) * (1 + x))
    y = _poly(_GILES_CENTRE, w - 2.5) * x
    if _wide(x):
        for _ in range(2):
            y = y + (x - op("erf")(y)) / (op("exp")(-(y * y)) * _TWO_OVER_SQRT_PI)
    return y


def _erfcinv_tail(c: Tensor) -> Tensor:
    """``y >= 0`` with ``erfc(y) = c``, for ``0 < c <= 1/2`` (0 gives inf; NaN stays NaN)."""
    w = -op("log")(c * (2 - c))
    low, mid = op("lt")(w, 5), op("lt")(w, 16)
    sw = op("sqrt")(_where(mid, w, 16.0))
    giles = _where(low, _poly(_GILES_CENTRE, w - 2.5), _poly(_GILES_TAIL, sw - 3)) * (1 - c)
    big = -op("log")(_where(mid, 1e-8, c))  # L = -log c; where not used, a harmless stand-in
    asymptotic = op("sqrt")(big - op("log")(big * math.pi) * 0.5)
    y = _where(mid, giles, asymptotic)
    wanted = op("log")(c)
    zero = op("eq")(c, 0)  # inf: the steps would give inf - inf
    for _ in range(3 if _wide(c) else 2):
        ys = _where(zero, 1.0, y)
        log_erfc = _log_erfc(ys)
        slope = op("exp")(-(ys * ys) - log_erfc) * _TWO_OVER_SQRT_PI  # -d/dy log erfc(y)
        ys = ys + (log_erfc - _where(zero, 0.0, wanted)) / slope
        y = _where(zero, math.inf, ys)
    if not _wide(c):  # float32: the steps only where Giles' polynomials end
        y = _where(mid, giles, y)
    return y


@decomposition("erfinv", "abs lt le gt eq log sqrt exp erf erfc mul add sub div neg where copysign to_dtype")
def _erfinv(x: Tensor) -> Tensor:
    """The inverse error function: ``±inf`` at ``±1``, NaN outside ``[-1, 1]``, sign of zero kept."""
    x = _half_to_float32(x, result_dtype("erfinv", x))
    a = op("abs")(x)
    centre = op("le")(a, 0.5)
    y = _where(centre, _erfinv_centre(_where(centre, x, 0.0)), _erfcinv_tail(_where(centre, 0.5, 1 - a)))
    y = op("copysign")(op("abs")(y), x)  # odd: also -0 at -0 (the Newton step's sum gives +0)
    return _where(op("gt")(a, 1), math.nan, y)


@decomposition("special_ndtri", "abs lt le gt eq log sqrt exp erf erfc mul add sub div neg where to_dtype")
def _ndtri(p: Tensor) -> Tensor:
    """The standard normal quantile: ``-inf`` at 0, ``inf`` at 1, NaN outside ``[0, 1]``."""
    p = _half_to_float32(p, result_dtype("special_ndtri", p))
    x = p * 2 - 1  # exact for p in [1/4, 1]
    centre = op("le")(op("abs")(x), 0.5)
    upper = op("gt")(p, 0.5)
    c = _where(upper, (1 - p) * 2, p * 2)  # 1 - p is exact for p >= 1/2
    tail = _erfcinv_tail(_where(centre, 0.5, c)) * math.sqrt(2)
    y = _where(centre, _erfinv_centre(_where(centre, x, 0.0)) * math.sqrt(2), _where(upper, tail, -tail))
    return _where(op("gt")(op("abs")(x), 1), math.nan, y)


def _erfcx_tail(y: Tensor) -> Tensor:
    """``exp(y^2) erfc(y)`` for ``y`` at or past ``_TAIL_FROM``: the tail formula without its exponential."""
    if _wide(y):
        return (1 / _SQRT_PI) / _laplace_cf(y)
    t = 1 / (y * 0.5 + 1)
    return t * op("exp")(_poly(_NR, t))


def _ndtr_upper(x: Tensor) -> Tensor:
    """``erfc(x / sqrt 2)`` for ``x >= 0``: past the tail's start ``exp(-x^2 / 2)`` from the exact
    square of ``x`` itself (``x / sqrt 2`` is rounded: its square would cost ``x^2 eps`` relative,
    2e-6 at ``x = 6`` in float32), times the tail formula; below it the backend's ``erfc``."""
    y = x * math.sqrt(0.5)
    start = _TAIL_FROM[_wide(x)]
    near = op("lt")(y, start)
    cap = 40.0 if _wide(x) else 15.0  # erfc is 0 (or subnormal) past these already
    tail_x = _where(near, start * math.sqrt(2), _where(op("gt")(x, cap), cap, x))
    tail = _exp_square(tail_x, -0.5) * _erfcx_tail(tail_x * math.sqrt(0.5))
    return _where(near, op("erfc")(_where(near, y, 0.0)), _where(op("gt")(x, cap), 0.0, tail))


# -- log_ndtr and erfcx -------------------------------------------------------------------

@decomposition("special_log_ndtr", "lt gt ge eq log log1p exp erfc mul add sub div neg where to_dtype")
def _log_ndtr(x: Tensor) -> Tensor:
    """``log(ndtr(x))``: ``log1p(-erfc(x / sqrt 2) / 2)`` for ``x >= 0``, the log of the left tail
    (no underflow: ``-x^2 / 2`` and a slowly varying log) below."""
    x = _half_to_float32(x, result_dtype("special_log_ndtr", x))
    right = op("ge")(x, 0)
    xr = _where(right, x, 0.0)
    xl = _where(right, -1.0, x)
    upper = op("log1p")(_ndtr_upper(xr) * -0.5)
    lower = _log_erfc(xl * -math.sqrt(0.5), xl * xl * 0.5) - LN2
    return _where(right, upper, lower)


def _exp_square(x: Tensor, scale: float = 1.0) -> Tensor:
    """``exp(scale x^2)``, ``x^2`` split exactly into ``s + e`` (Dekker), as ``exp(scale s) (1 + scale e)``
    (``scale`` a power of two: exact)."""
    a = x * (134217729.0 if _wide(x) else 4097.0)  # 2^27 + 1, 2^12 + 1: half the mantissa
    hi = a - (a - x)
    lo = x - hi
    s = x * x
    e = ((hi * hi - s) + hi * lo * 2) + lo * lo
    return op("exp")(s * scale) * (e * scale + 1)


@decomposition("special_erfcx", "lt erfc exp log mul add sub div neg where to_dtype")
def _erfcx(x: Tensor) -> Tensor:
    """``exp(x^2) erfc(x)``: the tail formula without its exponential for large ``x`` (0 at inf),
    ``exp(x^2) erfc(x)`` with an exact square below (inf once ``exp(x^2)`` overflows)."""
    x = _half_to_float32(x, result_dtype("special_erfcx", x))
    start = _TAIL_FROM[_wide(x)]
    near = op("lt")(x, start)
    tail = _erfcx_tail(_where(near, start, x))
    low_x = _where(near, _where(op("lt")(x, -50.0), -50.0, x), 0.0)  # -50: exp(x^2) is inf already
    return _where(near, _exp_square(low_x) * op("erfc")(low_x), tail)

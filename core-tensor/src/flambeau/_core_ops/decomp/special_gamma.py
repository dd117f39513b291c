"""The gamma family past ``lgamma`` as formulas over the core tier: ``digamma``, ``polygamma``,
``mvlgamma``, ``special_zeta`` (Hurwitz), ``igamma``/``igammac`` (regularized incomplete gamma).

- ``digamma``: for ``x > 0`` the recurrence ``psi(x) = psi(x + 10) - sum 1 / (x + k)`` (below 10)
  and the asymptotic series ``log w - 1 / (2w) - sum B_2k / (2k w^2k)`` (Abramowitz and Stegun
  6.3.18; seven terms: below 1e-17 relative from ``w = 10``); below 0 the reflection
  ``psi(x) = psi(1 - x) - pi cot(pi x)``, ``cot`` of ``r = x - round(x)`` (exact; scipy's
  ``tan(pi x)`` loses 4e-12 relative within 1e-5 of a pole). Near the positive root
  ``1.4616...`` and the root ``-0.5040...`` the result is small and those sums cancel, so there
  it is the Taylor series ``sum (-1)^(n+1) zeta(n + 1, r0) (x - r0)^n`` around the root (as scipy
  does), ``x - r0`` from a two-float ``r0`` (float64: within 0.2 and 0.1 of them; float32, whose
  recurrence loses more, within 0.6 of the positive root). Near the other roots on the negative
  axis the reflection's terms cancel (~2e-15 absolute in float64, as in scipy). Poles as PyTorch
  and scipy: ``-inf`` at ``+0``, ``+inf`` at ``-0``, NaN at the negative integers and ``-inf``.
- ``special_zeta(s, q) = sum_k (q + k)^-s``: the terms summed directly until ``q + k`` reaches
  ``T = min(s + 10, 200)``, then the Euler-Maclaurin formula with twelve Bernoulli terms (its
  remainder is below 1e-20 of ``T^-s`` there; from ``T = s`` it was 1e-13 for ``s = 10``; past
  200 the tail ``T^-s`` underflows). The direct loop runs on whole tensors, masked, until every
  element has reached ``T``: ``ceil(T - min q)`` rounds, so a ``q`` of -1e6 costs a million
  rounds, as Cephes' loop (PyTorch's) costs per element. Domain as Cephes: ``s = 1`` inf,
  ``s < 1`` NaN; ``q <= 0``: inf at the integers, NaN for a non-integral ``s``, else the sum.
- ``polygamma(n, x)`` is ``digamma`` for ``n = 0`` and ``(-1)^(n+1) n! zeta(n + 1, x)`` above;
  for ``x < 0`` the reflection formula instead (``cot(pi x)``'s n-th derivative as a polynomial
  in ``cot``), so that the loop does not run ``-x`` rounds nor cancel terms of both signs.
- ``mvlgamma(x, p) = p (p - 1) / 4 log(pi) + sum_j lgamma(x - j / 2)``, after PyTorch's check that
  every element exceeds ``(p - 1) / 2`` (a host sync, as PyTorch's ``.item()``).
- ``igamma``/``igammac``: Numerical Recipes' series for P (``x <= 1`` or ``x <= a``) and
  continued fraction for Q (above), the other as the complement, each iterated on whole tensors
  until every element has converged (at most 10000 rounds; about ``9 sqrt(a)`` where ``x`` is
  near a large ``a``: Cephes and PyTorch switch to Temme's uniform asymptotic expansion there,
  which this does not have). The factor ``x^a e^-x / Gamma(a)`` is, from ``a = 10``,
  ``sqrt(a / 2pi) exp(a (log(x / a) - (x - a) / a) - stirling(a))`` with the difference's series
  near ``x = a``: no cancellation between ``a log x``, ``x`` and ``lgamma(a)``.

Measured (cpu and example backends, float64; mpmath where scipy is off): digamma within 1e-13
relative of scipy (6e-14 seen, near the negative roots; 1e-15 elsewhere), polygamma and zeta 1e-15,
and exact to mpmath near the poles where scipy is not; igamma/igammac within 5e-14 of scipy
(3e-15 of mpmath where scipy is the one off by 3e-14) except where the result is far in the tails
(``e^-600``: the exponent's rounding, 2e-13, as scipy's) and Q for ``a < 1``, ``x < 1.1``
(1 - P: 2e-14; scipy has a series for it). float32 computes in float32
(the half types too, rounded once at the end): digamma within ~10 ulp between 0.8 and 2.1 (PyTorch's
float32 formula loses as much), zeta and the incomplete gamma functions carry ``pow``'s and
``exp``'s error of ``s log q eps`` (up to 1e-5 relative far in their tails).
"""
from __future__ import annotations

import math
from typing import Any

from ... import _dtypes
from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype, scalar_like
from .special import _half_to_float32

#: Bernoulli numbers B_2 .. B_24
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330, 854513 / 138, -236364091 / 2730)
#: the Euler-Maclaurin coefficients B_2j / (2j)!
_EM = tuple(b / math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI))
#: digamma's asymptotic series: B_2k / (2k), k = 1..7, the coefficients of w^-2k
_PSI_ASYMPTOTIC = tuple(_BERNOULLI[k] / (2 * k + 2) for k in range(7))
_SHIFT = 10


def _where(cond: Tensor, a: Any, b: Any) -> Tensor:
    like = a if isinstance(a, Tensor) else b
    a = a if isinstance(a, Tensor) else scalar_like(a, like)
    b = b if isinstance(b, Tensor) else scalar_like(b, like)
    return op("where")(cond, a, b)


def _wide(x: Tensor) -> bool:
    return x._dtype is _dtypes.float64


# -- Hurwitz zeta ---------------------------------------------------------------------------

def _zeta_scalar(s: float, q: float) -> float:
    """The same algorithm on Python floats (for the digamma root series' coefficients)."""
    total, t = 0.0, min(s + 10.0, 200.0)
    while q < t:
        total += q ** -s
        q += 1
    return total + _em_tail(s, q, q ** -s, q ** (1 - s))


def _em_tail(s: Any, w: Any, b: Any, b1: Any) -> Any:
    """Euler-Maclaurin: ``sum_{k>=0} (w + k)^-s`` from ``b = w^-s`` and ``b1 = w^(1-s)``."""
    tail = b1 / (s - 1) + b * 0.5
    poch = s * b / w  # s (s+1) ... (s+2j-2) w^(-s-2j+1), j = 1
    w2 = w * w
    for j, c in enumerate(_EM):
        tail = tail + poch * c
        poch = poch * ((s + (2 * j + 1)) * (s + (2 * j + 2))) / w2
    return tail


def _hurwitz(s: Tensor, q: Tensor) -> Tensor:
    """``zeta(s, q)`` for tensors of one dtype (broadcast against each other)."""
    integral_q = op("eq")(op("floor")(q), q)
    integral_s = op("eq")(op("floor")(s), s)
    nonpositive = op("le")(q, 0)
    pole = op("eq")(s, 1) | (nonpositive & integral_q)
    invalid = op("lt")(s, 1) | (nonpositive & ~integral_s)
    skip = pole | invalid
    s_in, s = s, _where(skip, 2.0, s)
    w = _where(skip, 1.0, q)
    limit = op("clamp_max")(s + 10, 200.0)
    total = s * 0  # (not w * 0: w may be inf)
    active = op("lt")(w, limit)
    while bool(op("any")(active)):
        total = total + _where(active, op("pow")(_where(active, w, 1.0), -s), 0.0)
        w = _where(active, w + 1, w)
        active = op("lt")(w, limit)
    result = total + _em_tail(s, w, op("pow")(w, -s), op("pow")(w, 1 - s))
    # Cephes' order: s = 1, then s < 1, then a pole in q, then a non-integral s for q <= 0
    result = _where(nonpositive & ~integral_s, math.nan, result)
    result = _where(nonpositive & integral_q, math.inf, result)
    return _where(op("eq")(s_in, 1), math.inf, _where(op("lt")(s_in, 1), math.nan, result))


@decomposition("special_zeta", "floor eq le lt clamp_max any pow mul add sub div bitwise_and bitwise_or "
               "bitwise_not where to_dtype")
def _zeta(s: Any, q: Any) -> Tensor:
    """The Hurwitz zeta function (Riemann's for ``q = 1``)."""
    dt = result_dtype("special_zeta", s, q)
    like = s if isinstance(s, Tensor) else q
    s = s if isinstance(s, Tensor) else scalar_like(s, like, dt)
    q = q if isinstance(q, Tensor) else scalar_like(q, like, dt)
    return _hurwitz(_half_to_float32(as_dtype(s, dt), dt), _half_to_float32(as_dtype(q, dt), dt))


# -- digamma --------------------------------------------------------------------------------

def _two_float(value: str, wide: bool) -> tuple[float, float]:
    """A decimal constant as a float64 (``wide``) or float32 and the float nearest the rest."""
    from decimal import Decimal, getcontext

    import numpy as np

    getcontext().prec = 50
    hi = float(value) if wide else float(np.float32(value))
    return hi, float(Decimal(value) - Decimal(hi))


#: The roots of digamma near which the Taylor series is used: (root, (half-width, terms) in float64,
#: in float32). float32's window around the positive root is wider: its recurrence cancels more
#: (``log(x + 10)`` against the reciprocals: 1e-6 relative at ``x = 1.7``, where ``psi`` is 0.2).
_ROOTS = (("1.4616321449683623412626595423257213284681962040064", (0.2, 22), (0.6, 40)),
          ("-0.50408300826445540925221005424315823972586290310", (0.1, 24), (0.1, 12)))


def _root_series() -> dict[bool, list[tuple[float, float, float, tuple[float, ...]]]]:
    """For float64 (True) and float32: per root its two-float split, half-width and coefficients."""
    out: dict[bool, list[tuple[float, float, float, tuple[float, ...]]]] = {True: [], False: []}
    for value, *shapes in _ROOTS:
        for wide, (width, terms) in zip((True, False), shapes):
            hi, lo = _two_float(value, wide)
            root = _two_float(value, True)[0]
            coeffs = tuple((-1) ** (n + 1) * _zeta_scalar(n + 1, root) for n in range(1, terms + 1))
            out[wide].append((hi, lo, width, coeffs))
    return out


_ROOT_SERIES = _root_series()


def _cot_pi(r: Tensor) -> Tensor:
    """``cot(pi r)`` for ``r`` in ``[-1/2, 1/2]`` (``x - round(x)``). Past ``|r| = 1/4`` as
    ``-tan(pi s)``, ``s = r -+ 1/2`` (exact): ``cos(pi r)`` of ``pi r`` rounded would leave the small
    result near ``r = 1/2`` with ``pi r``'s absolute error (4e-8 in float32)."""
    upper, lower = op("gt")(r, 0.25), op("lt")(r, -0.25)
    outer = upper | lower
    shifted = _where(upper, r - 0.5, _where(lower, r + 0.5, 0.25)) * math.pi
    inner = _where(outer, 0.25, r) * math.pi
    return _where(outer, -(op("sin")(shifted) / op("cos")(shifted)), op("cos")(inner) / op("sin")(inner))


def _psi_positive(z: Tensor) -> Tensor:
    """digamma for ``z > 0`` (and inf): the recurrence up to ``z >= 10``, then the asymptotic series."""
    small = op("lt")(z, _SHIFT)
    reciprocals = z * 0
    for k in range(_SHIFT):
        reciprocals = reciprocals + 1 / _where(small, z + k, math.inf)
    w = _where(small, z + _SHIFT, z)
    inv2 = 1 / (w * w)
    series = inv2 * _PSI_ASYMPTOTIC[-1]
    for c in _PSI_ASYMPTOTIC[-2::-1]:
        series = (series + c) * inv2
    return op("log")(w) - 0.5 / w - series - reciprocals


@decomposition("digamma", "floor round eq le lt gt abs mul add sub div log sin cos where bitwise_and bitwise_or "
               "signbit to_dtype")
def _digamma(x: Tensor) -> Tensor:
    """``Gamma'(x) / Gamma(x)`` (see the module's notes for the method and the special values)."""
    x = _half_to_float32(as_dtype(x, result_dtype("digamma", x)), result_dtype("digamma", x))
    positive = op("gt")(x, 0)
    integral = op("eq")(op("floor")(x), x)  # includes both infinities
    pole = op("le")(x, 0) & integral
    z = _where(positive, x, _where(pole, 1.0, 1 - x))
    base = _psi_positive(z)
    # pi / tan(pi x) from r = x - round(x) in [-1/2, 1/2] (period 1): exact (Sterbenz), where
    # x - floor(x) would round x = -1e-5 + 1
    cot = _cot_pi(_where(positive | pole, 0.25, x - op("round")(x)))
    result = _where(positive, base, base - cot * math.pi)
    for hi, lo, width, coeffs in _ROOT_SERIES[_wide(x)]:
        d = (x - hi) - lo
        near = op("lt")(op("abs")(d), width)
        d = _where(near, d, 0.0)
        series = d * coeffs[-1]
        for c in coeffs[-2::-1]:
            series = (series + c) * d
        result = _where(near, series, result)
    zero_value = _where(op("signbit")(x), scalar_like(math.inf, x), -math.inf)  # -inf at +0, +inf at -0
    special = _where(op("eq")(x, 0), zero_value, _where(op("eq")(x, math.inf), scalar_like(math.inf, x), math.nan))
    return _where(pole | op("eq")(x, math.inf), special, result)


# -- polygamma and mvlgamma -------------------------------------------------------------------

def _cot_derivative(n: int) -> tuple[int, ...]:
    """The coefficients (constant first) of ``P_n`` with ``d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x))``:
    ``P_0(t) = t``, ``P_(k+1)(t) = -(1 + t^2) P_k'(t)``."""
    p = [0, 1]
    for _ in range(n):
        d = [i * c for i, c in enumerate(p)][1:] or [0]
        out = [0] * (len(d) + 2)
        for i, c in enumerate(d):
            out[i] -= c
            out[i + 2] -= c
        p = out
    while len(p) > 1 and p[-1] == 0:
        p.pop()
    return tuple(p)


@decomposition("polygamma", "digamma special_zeta floor round eq ne lt le gt clamp_max any pow bitwise_or "
               "bitwise_not mul add sub div sin cos where bitwise_and to_dtype")
def _polygamma(n: int, x: Tensor) -> Tensor:
    """``digamma`` for ``n = 0``; ``(-1)^(n+1) n! zeta(n + 1, x)`` above, reflected for ``x < 0``:
    ``psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x))`` (from ``psi_n(1 - x) +
    (-1)^(n+1) psi_n(x) = (-1)^n pi d^n/dx^n cot(pi x)``), so that the zeta's direct sum does not run
    ``-x`` rounds, nor cancel its terms of both signs (float32: 0.3% at ``x = -1.5``, n = 6)."""
    dt = result_dtype("polygamma", n, x)
    x = _half_to_float32(as_dtype(x, dt), dt)
    if n == 0:
        return op("digamma")(x)
    sign = 1.0 if n % 2 else -1.0
    factorial = float(math.factorial(n)) if n <= 170 else math.inf
    reflect = op("lt")(x, 0) & op("ne")(op("round")(x), x)  # not at the poles, where zeta gives inf
    z = _where(reflect, 1 - x, x)
    base = _hurwitz(scalar_like(n + 1, x), z) * (sign * factorial)
    t = _cot_pi(_where(reflect, x - op("round")(x), 0.25))  # an exact reduction (period 1)
    coeffs = _cot_derivative(n)
    poly = t * 0 + float(coeffs[-1])
    for c in coeffs[-2::-1]:
        poly = poly * t + float(c)
    reflected = base * (1.0 if n % 2 == 0 else -1.0) - poly * math.pi ** (n + 1)
    return _where(reflect, reflected, base)


@decomposition("mvlgamma", "gt all lgamma sub add to_dtype")
def _mvlgamma(x: Tensor, p: int) -> Tensor:
    """``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2)``, all elements checked first."""
    dt = result_dtype("mvlgamma", x, p)
    x = _half_to_float32(as_dtype(x, dt), dt)
    if math.prod(x._data.shape) and not bool(op("all")(op("gt")(x, (p - 1) / 2))):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    total = op("lgamma")(x)
    for j in range(1, p):
        total = total + op("lgamma")(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


# -- the regularized incomplete gamma functions -----------------------------------------------

#: The most whole-tensor rounds the series or the continued fraction takes (each converges in
#: about ``9 sqrt(a)`` rounds where ``x`` is near a large ``a``; Cephes stops at 2000 and has an
#: asymptotic expansion for large ``a`` that this does not).
_IGAMMA_MAX_ROUNDS = 10000
_LOG1PMX_SERIES_BELOW = 0.25
_LOG1PMX_TERMS = 26  # 0.25^27 / 27 < 1e-17


def _log1pmx(t: Tensor, ratio: Tensor) -> Tensor:
    """``log(1 + t) - t`` for ``t > -1``, given ``ratio = 1 + t`` rounded once (not ``1 + t``
    formed from a rounded ``t``, which loses its digits near ``t = -1``): its series where the
    difference cancels."""
    near = op("lt")(op("abs")(t), _LOG1PMX_SERIES_BELOW)
    ts = _where(near, t, 0.0)
    series = ts * ((-1) ** (_LOG1PMX_TERMS + 1) / _LOG1PMX_TERMS)
    for n in range(_LOG1PMX_TERMS - 1, 1, -1):
        series = (series + (-1) ** (n + 1) / n) * ts
    series = series * ts
    return _where(near, series, op("log")(_where(near, 1.0, ratio)) - _where(near, 0.0, t))


def _igamma_factor(a: Tensor, x: Tensor) -> Tensor:
    """``x^a exp(-x) / Gamma(a)`` for ``a, x > 0``. From ``a = 10`` as
    ``sqrt(a / (2 pi)) exp(a log1pmx((x - a) / a) - c(a))``, ``c`` Stirling's correction to
    ``lgamma`` (A&S 6.1.41): no cancellation of the large ``a log x``, ``x`` and ``lgamma(a)``."""
    from .special import _STIRLING

    large = op("ge")(a, 10)
    al = _where(large, a, 10.0)
    inv, inv2 = 1 / al, 1 / (al * al)
    correction = inv * _STIRLING[-1]
    for c in _STIRLING[-2::-1]:
        correction = correction * inv2 + c * inv
    uniform = op("sqrt")(al * (1 / (2 * math.pi))) * op("exp")(al * _log1pmx((x - al) / al, x / al) - correction)
    asmall = _where(large, 1.0, a)
    direct = op("exp")(asmall * op("log")(x) - x - op("lgamma")(asmall))
    return _where(large, uniform, direct)


def _igamma_pair(a: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(P(a, x), Q(a, x)): the series for P where ``x <= 1`` or ``x <= a``, else the continued
    fraction for Q (Numerical Recipes, 2nd ed., 6.2: ``gser``, and ``gcf`` by the modified Lentz
    method), the other one as the complement; and where the arguments are regular (positive, finite)."""
    eps = 1.2e-16 if _wide(a) else 6e-8
    tiny = 1e-300 if _wide(a) else 1e-30
    finite_a, finite_x = op("lt")(op("abs")(a), math.inf), op("lt")(op("abs")(x), math.inf)
    regular = op("gt")(a, 0) & op("gt")(x, 0) & finite_a & finite_x
    a = _where(regular, a, 1.0)
    x = _where(regular, x, 1.0)
    use_cf = op("gt")(x, 1) & op("gt")(x, a)
    factor = _igamma_factor(a, x)

    # the series: P = factor / a * (1 + x / (a + 1) + x^2 / ((a + 1)(a + 2)) + ...)
    xs = _where(use_cf, 0.0, x)  # 0 converges at once
    term = 1 / a
    total, ap = term, a
    active = op("bitwise_not")(use_cf)
    rounds = 0
    while rounds < _IGAMMA_MAX_ROUNDS and bool(op("any")(active)):
        ap = ap + 1
        term = term * xs / ap
        total = total + term
        active = active & op("ge")(op("abs")(term), op("abs")(total) * eps)
        rounds += 1
    p_series = total * factor

    # the continued fraction: Q = factor / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...))
    xc = _where(use_cf, x, a + 2)  # a stand-in that converges
    b = xc + 1 - a
    c = b * 0 + 1 / tiny
    d = 1 / b
    h = d
    active = use_cf
    i, rounds = 0, 0
    while rounds < _IGAMMA_MAX_ROUNDS and bool(op("any")(active)):
        i += 1
        an = (a - i) * i
        b = b + 2
        d = an * d + b
        d = _where(op("lt")(op("abs")(d), tiny), tiny, d)
        c = b + an / c
        c = _where(op("lt")(op("abs")(c), tiny), tiny, c)
        d = 1 / d
        delta = d * c
        h = _where(active, h * delta, h)
        active = active & op("ge")(op("abs")(delta - 1), eps)
        rounds += 1
    q_cf = h * factor
    p = _where(use_cf, 1 - q_cf, p_series)
    q = _where(use_cf, q_cf, 1 - p_series)
    return p, q, regular


def _igamma_edges(a: Tensor, x: Tensor, value: Tensor, regular: Tensor, upper: bool) -> Tensor:
    """PyTorch's values off the regular domain: NaN for a negative argument, for ``a = x = 0``
    and for two infinities; ``a = 0``: the limit in ``x > 0``; ``x = 0``, ``a = inf``, ``x = inf``
    the limits (P = 0, 0, 1)."""
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)  # P's limit, then Q's is the other
    lo, hi, nan = (scalar_like(v, value) for v in (lo, hi, math.nan))
    inf_a, inf_x = op("eq")(a, math.inf), op("eq")(x, math.inf)
    out = _where(inf_x, hi, value)
    out = _where(inf_a, _where(inf_x, math.nan, lo), out)
    out = _where(op("eq")(x, 0), lo, out)
    out = _where(op("eq")(a, 0), _where(op("gt")(x, 0), hi, math.nan), out)
    invalid = op("lt")(x, 0) | op("lt")(a, 0) | op("ne")(a, a) | op("ne")(x, x)
    return _where(regular, value, _where(invalid, nan, out))


def _igamma_inputs(name: str, a: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    dt = result_dtype(name, a, x)
    a = _half_to_float32(as_dtype(a, dt), dt)
    x = _half_to_float32(as_dtype(x, dt), dt)
    return a, x


_IGAMMA_USES = ("abs lt le gt ge eq ne any sqrt exp log lgamma mul add sub div neg where bitwise_and "
                "bitwise_or bitwise_not to_dtype")


@decomposition("igamma", _IGAMMA_USES)
def _igamma(a: Tensor, x: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    a, x = _igamma_inputs("igamma", a, x)
    p, _, regular = _igamma_pair(a, x)
    return _igamma_edges(a, x, p, regular, upper=False)


@decomposition("igammac", _IGAMMA_USES)
def _igammac(a: Tensor, x: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a, x = _igamma_inputs("igammac", a, x)
    _, q, regular = _igamma_pair(a, x)
    return _igamma_edges(a, x, q, regular, upper=True)

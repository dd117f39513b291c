"""Backward formulas of the ops in ``flambeau._core_ops.pointwise`` and ``pointwise_special``.

All are written with flambeau ops, so that they differentiate again (``create_graph=True``).
"""
from __future__ import annotations

import math
from flambeau._tensor import Tensor

from ..formula import Formula
from ._helpers import conj, zeros_like

_LN2 = math.log(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _fb():
    import flambeau

    return flambeau


def _fn(name: str):
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


# -- fused arithmetic ------------------------------------------------------------------

def _addcmul(ctx, g):
    _, t1, t2, value = ctx.args
    gv = g if value == 1 else g * conj(value)
    return g, (gv * conj(t2) if ctx.needs(1) else None), (gv * conj(t1) if ctx.needs(2) else None)


def _addcdiv(ctx, g):
    _, t1, t2, value = ctx.args
    gv = g if value == 1 else g * conj(value)
    g1 = gv / conj(t2) if ctx.needs(1) else None
    g2 = -gv * conj(t1) / conj(t2 * t2) if ctx.needs(2) else None
    return g, g1, g2


def _clamp_bound(keep_if_ge: bool):
    def fn(ctx, g):
        x, bound = ctx.args
        inside = (x >= bound) if keep_if_ge else (x <= bound)
        gx = g * inside if ctx.needs(0) else None
        gb = g * inside.logical_not() if ctx.needs(1) else None
        return gx, gb
    return fn


# -- unary -----------------------------------------------------------------------------

def _zero(ctx, g):
    return zeros_like(g)


def _frexp(ctx, g):
    mantissa_grad = g[0]
    if mantissa_grad is None:
        return None
    return mantissa_grad / ctx.result[1].exp2()


def _logit(ctx, g):
    x, eps = ctx.args
    grad = g / (x * (-x + 1))
    if eps is None:
        return grad
    return _fb().where((x < eps) | (x > 1 - eps), 0.0, grad)


def _imag(ctx, g):
    # imag(z) = (z - conj z) / 2i: a real L's gradient dL/dRe + i dL/dIm is i * g (mul's formula
    # conjugates the scalar, which makes the second derivative right too)
    return g * 1j


def _sgn(ctx, g):
    x = ctx.args[0]
    if not x._dtype.is_complex:
        return zeros_like(g)
    # s = z / |z| is not holomorphic: grad = (g - s^2 conj(g)) / (2 |z|), 0 where z == 0
    fb = _fb()
    s = ctx.result
    r = x.abs()
    zero = r == 0
    return fb.where(zero, 0.0, (g - s * s * g.conj()) / (fb.where(zero, 1.0, r) * 2))


def _angle(ctx, g):
    x = ctx.args[0]
    if not x._dtype.is_complex:
        return zeros_like(g)
    # atan2(Im z, Re z): d/dRe = -Im/|z|^2, d/dIm = Re/|z|^2, i.e. grad = g * i z / |z|^2
    fb = _fb()
    r2 = x.real * x.real + x.imag * x.imag
    zero = r2 == 0
    return fb.where(zero, 0.0, g * x * 1j / fb.where(zero, 1.0, r2))


# -- binary ----------------------------------------------------------------------------

def _copysign(ctx, g):
    x = ctx.args[0]
    # d|x|*sign(y)/dx is result/x away from 0; PyTorch gives 0 at x == 0
    ratio = _fb().where(x == 0, 0.0, ctx.result / _fb().where(x == 0, 1.0, x))
    return (g * ratio if ctx.needs(0) else None), (zeros_like(g) if ctx.needs(1) else None)


def _hypot(ctx, g):
    x, y = ctx.args
    r = ctx.result
    return (g * x / r if ctx.needs(0) else None), (g * y / r if ctx.needs(1) else None)


def _logaddexp(base2: bool):
    def fn(ctx, g):
        x, y = ctx.args
        power = (lambda t: t.exp2()) if base2 else (lambda t: t.exp())
        gx = g / (power(y - x) + 1) if ctx.needs(0) else None
        gy = g / (power(x - y) + 1) if ctx.needs(1) else None
        return gx, gy
    return fn


def _xlog(log1p: bool):
    def fn(ctx, g):
        fb = _fb()
        x, y = ctx.args
        gx = gy = None
        if ctx.needs(0):
            ys = y if isinstance(y, Tensor) else fb.tensor(y, dtype=g.dtype)
            logy = ys.log1p() if log1p else ys.log()
            edge = (ys <= -1) if log1p else (ys <= 0)
            gx = fb.where((x == 0) & edge, 0.0, g * logy)
        if ctx.needs(1):
            gy = g * x / ((y + 1) if log1p else y)
        return gx, gy
    return fn


def _ldexp(ctx, g):
    _, other = ctx.args
    gx = g * other.exp2() if ctx.needs(0) else None
    gy = g * ctx.result * _LN2 if ctx.needs(1) else None
    return gx, gy


def _float_power(ctx, g):
    fb = _fb()
    x, e = ctx.args
    gx = gy = None
    if g.dtype.is_complex:
        return _float_power_complex(ctx, g, x, e)
    if ctx.needs(0):
        if isinstance(e, Tensor):
            gx = fb.where(e == 0, 0.0, g * e * fb.float_power(x, e - 1))
        else:
            gx = zeros_like(g) if e == 0 else g * e * fb.float_power(x, e - 1)
    if ctx.needs(1):
        xs = x if isinstance(x, Tensor) else fb.tensor(x, dtype=g.dtype)
        gy = g * fb.where((xs == 0) & (e >= 0), 0.0, ctx.result * xs.log())
    return gx, gy


def _float_power_complex(ctx, g, x, e):
    # holomorphic in both: conjugated slopes, and no ordering of complex exponents (0 ** 0 is masked)
    fb = _fb()
    gx = gy = None
    if ctx.needs(0):
        if isinstance(e, Tensor):
            gx = fb.where(e == 0, 0.0, g * conj(e * fb.float_power(x, e - 1)))
        else:
            gx = zeros_like(g) if e == 0 else g * conj(e * fb.float_power(x, e - 1))
    if ctx.needs(1):
        xs = x if isinstance(x, Tensor) else fb.tensor(x, dtype=g.dtype)
        gy = g * conj(fb.where(xs == 0, 0.0, ctx.result * xs.log()))
    return gx, gy


# -- special functions -----------------------------------------------------------------

def _polygamma(ctx, g):
    n, x = ctx.args
    return None, g * _fb().polygamma(n + 1, x)


def _mvlgamma(ctx, g):
    x, p = ctx.args
    total = x.digamma()
    for j in range(1, p):
        total = total + (x - j / 2).digamma()
    return g * total


def _i1(ctx, g):
    x = ctx.args[0]
    safe = _fb().where(x == 0, 1.0, x)
    return g * _fb().where(x == 0, 0.5, x.i0() - ctx.result / safe)


def _i1e(ctx, g):
    x = ctx.args[0]
    safe = _fb().where(x == 0, 1.0, x)
    return g * _fb().where(x == 0, 0.5, _fn("special_i0e")(x) - ctx.result * (x.sgn() + 1 / safe))


def _sinc(ctx, g):
    x = ctx.args[0]
    safe = _fb().where(x == 0, 1.0, x)
    return g * conj(_fb().where(x == 0, 0.0, ((x * math.pi).cos() - ctx.result) / safe))


def _zeta(ctx, g):
    s, q = ctx.args
    if ctx.needs(0):
        raise NotImplementedError("the derivative for 'special_zeta: input' is not implemented.")
    return None, g * -s * _fn("special_zeta")(s + 1.0, q)


def _igamma(sign: float):
    def fn(ctx, g):
        a, x = ctx.args
        if ctx.needs(0):
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
        density = (-x + (a - 1) * x.log() - a.lgamma()).exp()
        return None, g * density * sign
    return fn


U = {  # name -> (fn, save, result)
    "sgn": (_sgn, ("input",), True),
    "angle": (_angle, ("input",), False),
    "conj_physical": (lambda c, g: g.conj_physical(), (), False),
    "deg2rad": (lambda c, g: g * (math.pi / 180.0), (), False),
    "rad2deg": (lambda c, g: g * (180.0 / math.pi), (), False),
    "nan_to_num": (lambda c, g: g * c.args[0].isfinite(), ("input",), False),
    "real": (lambda c, g: g, (), False),
    "imag": (_imag, (), False),
    "lgamma": (lambda c, g: g * c.args[0].digamma(), ("input",), False),
    "digamma": (lambda c, g: g * _fb().polygamma(1, c.args[0]), ("input",), False),
    "erfinv": (lambda c, g: g * (c.result * c.result).exp() * _HALF_SQRT_PI, (), True),
    "i0": (lambda c, g: g * _fn("special_i1")(c.args[0]), ("input",), False),
    "special_i0e": (lambda c, g: g * (_fn("special_i1e")(c.args[0]) - c.args[0].sgn() * c.result), ("input",), True),
    "special_i1": (_i1, ("input",), True),
    "special_i1e": (_i1e, ("input",), True),
    "special_ndtr": (lambda c, g: g * (c.args[0] * c.args[0] * -0.5).exp() * _INV_SQRT_2PI, ("input",), False),
    "special_ndtri": (lambda c, g: g * (c.result * c.result * 0.5).exp() * _SQRT_2PI, (), True),
    "special_log_ndtr": (lambda c, g: g * (c.args[0] * c.args[0] * -0.5 - c.result).exp() * _INV_SQRT_2PI,
                         ("input",), True),
    "special_erfcx": (lambda c, g: g * (c.args[0] * c.result * 2 - _TWO_OVER_SQRT_PI), ("input",), True),
    "special_entr": (lambda c, g: g * -(c.args[0].log() + 1), ("input",), False),
    "sinc": (_sinc, ("input",), True),
}


def formulas() -> dict[str, Formula]:
    table = {
        "addcmul": Formula(_addcmul, save=("tensor1", "tensor2")),
        "addcdiv": Formula(_addcdiv, save=("tensor1", "tensor2")),
        "clamp_min": Formula(_clamp_bound(True), save=("input", "min")),
        "clamp_max": Formula(_clamp_bound(False), save=("input", "max")),
        "frexp": Formula(_frexp, result=True),
        "logit": Formula(_logit, save=("input",)),
        "copysign": Formula(_copysign, save=("input",), result=True),
        "hypot": Formula(_hypot, save=("input", "other"), result=True),
        "logaddexp": Formula(_logaddexp(False), save=("input", "other")),
        "logaddexp2": Formula(_logaddexp(True), save=("input", "other")),
        "xlogy": Formula(_xlog(False), save=("input", "other")),
        "special_xlog1py": Formula(_xlog(True), save=("input", "other")),
        "ldexp": Formula(_ldexp, save=("other",), result=True),
        "float_power": Formula(_float_power, save=("input", "exponent"), result=True),
        "polygamma": Formula(_polygamma, save=("input",)),
        "mvlgamma": Formula(_mvlgamma, save=("input",)),
        "igamma": Formula(_igamma(1.0), save=("input", "other")),
        "special_zeta": Formula(_zeta, save=("input", "other")),
        "igammac": Formula(_igamma(-1.0), save=("input", "other")),
    }
    for name, (fn, save, result) in U.items():
        table[name] = Formula(fn, save=save, result=result)
    return table

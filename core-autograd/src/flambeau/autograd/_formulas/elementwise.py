"""Backward formulas of the pointwise ops (arithmetic, math functions, selection)."""
from __future__ import annotations

import math
from typing import Any

from flambeau._tensor import Tensor

from ..formula import Formula
from ._helpers import conj, zeros_like

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _scale(g: Tensor, alpha: Any) -> Tensor:
    # a complex alpha is a factor like any other: its conjugate scales the gradient
    return g if alpha == 1 else g * conj(alpha)


def _add(ctx, g):
    alpha = ctx.args[2]
    return g, (_scale(g, alpha) if ctx.needs(1) else None)


def _sub(ctx, g):
    alpha = ctx.args[2]
    return g, (_scale(g, -alpha) if ctx.needs(1) else None)


def _mul(ctx, g):
    x, y = ctx.args
    return (g * conj(y) if ctx.needs(0) else None), (g * conj(x) if ctx.needs(1) else None)


def _div(ctx, g):
    x, y, mode = ctx.args
    if mode is not None:
        return (zeros_like(g) if ctx.needs(0) else None), (zeros_like(g) if ctx.needs(1) else None)
    gx = g / conj(y) if ctx.needs(0) else None
    gy = -g * conj(x) / conj(y * y) if ctx.needs(1) else None
    return gx, gy


def _zero_both(ctx, g):
    return (zeros_like(g) if ctx.needs(0) else None), (zeros_like(g) if ctx.needs(1) else None)


def _remainder(ctx, g):
    x, y = ctx.args
    return g, (-g * x.div(y, rounding_mode="floor") if ctx.needs(1) else None)


def _fmod(ctx, g):
    x, y = ctx.args
    return g, (-g * x.div(y, rounding_mode="trunc") if ctx.needs(1) else None)


def _pow(ctx, g):
    x, e = ctx.args
    gx = gy = None
    if g._dtype.is_complex:
        return _pow_complex(ctx, g, x, e)
    if not isinstance(e, Tensor):
        if e == 0:
            return zeros_like(g)
        return g * e * x.pow(e - 1)
    if ctx.needs(0):
        # 0 ** 0 has no slope in x when e == 0 (PyTorch masks it the same way)
        gx = _mask_zero_exponent(g * e * x.pow(e - 1), e)
    if ctx.needs(1):
        import flambeau

        gy = g * flambeau.where((x == 0) & (e >= 0), 0.0, x.pow(e) * x.log())
    return gx, gy


def _pow_complex(ctx, g, x, e):
    # z ** e is holomorphic in z and in e: the gradients take the conjugated derivatives
    import flambeau

    if not isinstance(e, Tensor):
        return zeros_like(g) if e == 0 else g * conj(x.pow(e - 1) * e)
    gx = _mask_zero_exponent(g * conj(x.pow(e - 1) * e), e) if ctx.needs(0) else None
    gy = None
    if ctx.needs(1):
        gy = g * conj(flambeau.where(x == 0, 0.0, x.pow(e) * x.log()))
    return gx, gy


def _mask_zero_exponent(gx: Tensor, e: Tensor) -> Tensor:
    import flambeau

    return flambeau.where(e == 0, 0.0, gx)


def _atan2(ctx, g):
    x, y = ctx.args
    denom = x * x + y * y
    return (g * y / denom if ctx.needs(0) else None), (-g * x / denom if ctx.needs(1) else None)


def _extreme(greater: bool):
    def fn(ctx, g):
        import flambeau

        a, b = ctx.args
        wins = (a > b) if greater else (a < b)
        tie = a == b
        half = g * 0.5
        ga = flambeau.where(wins, g, flambeau.where(tie, half, 0.0)) if ctx.needs(0) else None
        gb = flambeau.where(wins, 0.0, flambeau.where(tie, half, g)) if ctx.needs(1) else None
        return ga, gb
    return fn


def _where(ctx, g):
    import flambeau

    cond = ctx.args[0]
    return (None,
            flambeau.where(cond, g, 0.0) if ctx.needs(1) else None,
            flambeau.where(cond, 0.0, g) if ctx.needs(2) else None)


def _clamp(ctx, g):
    import flambeau

    x, lo, hi = ctx.args
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        upper = x <= hi
        inside = upper if inside is None else inside & upper
    # A product with the bool mask, not where(): the same values for finite gradients, and
    # several times faster on the CPU backend (relu's backward is clamp's).
    gx = g * inside if ctx.needs(0) else None
    glo = flambeau.where(x < lo, g, 0.0) if ctx.needs(1) else None
    ghi = None
    if ctx.needs(2):
        above = x > hi
        if lo is not None:
            above = above & (x >= lo) if not isinstance(lo, Tensor) else above & (lo <= hi)
        ghi = flambeau.where(above, g, 0.0)
    return gx, glo, ghi


def _lerp(ctx, g):
    x, end, w = ctx.args
    gx = g * conj(1 - w) if ctx.needs(0) else None
    gend = g * conj(w) if ctx.needs(1) else None
    gw = g * conj(end - x) if ctx.needs(2) else None
    return gx, gend, gw


def _zero(ctx, g):
    return zeros_like(g)


U = {  # unary formulas: name -> (fn, save input, save result)
    "neg": (lambda c, g: -g, (), False),
    "abs": (lambda c, g: g * (c.args[0].sgn() if c.args[0]._dtype.is_complex else c.args[0].sign()), ("input",),
            False),
    "sign": (_zero, (), False),
    "round": (_zero, (), False),
    "floor": (_zero, (), False),
    "ceil": (_zero, (), False),
    "trunc": (_zero, (), False),
    "frac": (lambda c, g: g, (), False),
    "reciprocal": (lambda c, g: -g * c.result * c.result, (), True),
    "square": (lambda c, g: g * 2 * c.args[0], ("input",), False),
    "exp": (lambda c, g: g * c.result, (), True),
    "exp2": (lambda c, g: g * c.result * _LN2, (), True),
    "expm1": (lambda c, g: g * (c.result + 1), (), True),
    "log": (lambda c, g: g / c.args[0], ("input",), False),
    "log2": (lambda c, g: g / (c.args[0] * _LN2), ("input",), False),
    "log10": (lambda c, g: g / (c.args[0] * _LN10), ("input",), False),
    "log1p": (lambda c, g: g / (c.args[0] + 1), ("input",), False),
    "sqrt": (lambda c, g: g / (c.result * 2), (), True),
    "rsqrt": (lambda c, g: g * c.result.pow(3) * -0.5, (), True),
    "sin": (lambda c, g: g * c.args[0].cos(), ("input",), False),
    "cos": (lambda c, g: -g * c.args[0].sin(), ("input",), False),
    "tan": (lambda c, g: g * (c.result * c.result + 1), (), True),
    "asin": (lambda c, g: g * (-(c.args[0] * c.args[0]) + 1).rsqrt(), ("input",), False),
    "acos": (lambda c, g: -g * (-(c.args[0] * c.args[0]) + 1).rsqrt(), ("input",), False),
    "atan": (lambda c, g: g / (c.args[0] * c.args[0] + 1), ("input",), False),
    "sinh": (lambda c, g: g * c.args[0].cosh(), ("input",), False),
    "cosh": (lambda c, g: g * c.args[0].sinh(), ("input",), False),
    "tanh": (lambda c, g: g * (-(c.result * c.result) + 1), (), True),
    "asinh": (lambda c, g: g * (c.args[0] * c.args[0] + 1).rsqrt(), ("input",), False),
    "acosh": (lambda c, g: g * (c.args[0] * c.args[0] - 1).rsqrt(), ("input",), False),
    "atanh": (lambda c, g: g / (-(c.args[0] * c.args[0]) + 1), ("input",), False),
    "sigmoid": (lambda c, g: g * c.result * (-c.result + 1), (), True),
    "erf": (lambda c, g: g * (-(c.args[0] * c.args[0])).exp() * _TWO_OVER_SQRT_PI, ("input",), False),
    "erfc": (lambda c, g: g * (-(c.args[0] * c.args[0])).exp() * -_TWO_OVER_SQRT_PI, ("input",), False),
}


# Holomorphic with real Taylor coefficients: conj(f'(z)) == f'(conj z). PyTorch's convention wants
# grad * conj(f'(z)), which is conj(formula(conj(grad))) for these formulas (linear in grad).
_HOLOMORPHIC = frozenset({
    "reciprocal", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
})


def _conjugated(fn):
    def complex_aware(ctx, g):
        if not g._dtype.is_complex:
            return fn(ctx, g)
        return conj(fn(ctx, g.conj_physical()))

    complex_aware.__name__ = getattr(fn, "__name__", "formula")
    return complex_aware


def formulas() -> dict[str, Formula]:
    table = {
        "add": Formula(_add),
        "sub": Formula(_sub),
        "mul": Formula(_mul, save=("input", "other"), save_if={"input": ("other",), "other": ("input",)}),
        "div": Formula(_div, save=("input", "other")),
        "floor_divide": Formula(_zero_both),
        "remainder": Formula(_remainder, save=("input", "other")),
        "fmod": Formula(_fmod, save=("input", "other")),
        "pow": Formula(_pow, save=("input", "exponent")),
        "atan2": Formula(_atan2, save=("input", "other")),
        "maximum": Formula(_extreme(True), save=("input", "other")),
        "minimum": Formula(_extreme(False), save=("input", "other")),
        "where": Formula(_where, save=("condition",)),
        "clamp": Formula(_clamp, save=("input", "min", "max")),
        "lerp": Formula(_lerp, save=("input", "end", "weight")),
    }
    # a comparison's bool result carries no gradient; in place (``y.ge_(0)``) it reaches y's inputs as zeros
    # so are the logical ops' (PyTorch leaves y.logical_and_(m) unrecorded, passing y's gradient
    # through untouched as if nothing had been written; zeros are the derivative of what was)
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
        table[name] = Formula(_zero_both)
    table["logical_not"] = Formula(_zero)
    for name, (fn, save, result) in U.items():
        table[name] = Formula(_conjugated(fn) if name in _HOLOMORPHIC else fn, save=save, result=result)
    return table

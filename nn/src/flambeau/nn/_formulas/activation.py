"""Backward formulas of flambeau-nn's activation ops, written with flambeau ops (double backward works).

An op with a fused backward op (gelu, silu, mish, leaky_relu, elu, hardswish, softplus) calls it;
that backward op's own formula uses the second derivative. The others multiply by ``df``.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

from .._ops.activation import ACTIVATIONS, Activation, glu_halves


def _through_backward_op(act: Activation) -> Formula:
    def fn(ctx, g):
        x, *params = ctx.args
        return fb.ops.function(f"{act.op}_backward")(g, x, *params)
    fn.__name__ = act.op
    return Formula(fn, save=("input",))


def _backward_op_formula(act: Activation) -> Formula:
    # d/d grad_output of grad_output * f'(x) is f'(x): the backward op again; d/dx is grad_output * f''(x)
    def fn(ctx, gg):
        grad_output, x, *params = ctx.args
        d_grad = fb.ops.function(f"{act.op}_backward")(gg, x, *params) if ctx.needs(0) else None
        d_input = gg * grad_output * act.d2f(x, *params) if ctx.needs(1) else None
        return d_grad, d_input
    fn.__name__ = f"{act.op}_backward"
    return Formula(fn, save=("grad_output", "input"))


def _by_derivative(act: Activation) -> Formula:
    def fn(ctx, g):
        x, *params = ctx.args
        return g * act.df(x, *params)
    fn.__name__ = act.op
    return Formula(fn, save=("input",))


def _glu(ctx, g):
    input, dim = ctx.args
    a, b = glu_halves(input, dim)
    s = fb.sigmoid(b)
    return fb.cat([g * s, g * a * s * (-s + 1.0)], dim=dim)


def formulas() -> dict[str, Any]:
    table: dict[str, Any] = {"nn_glu": Formula(_glu, save=("input",))}
    for act in ACTIVATIONS:
        if act.d2f is not None:
            table[act.op] = _through_backward_op(act)
            table[f"{act.op}_backward"] = _backward_op_formula(act)
        else:
            table[act.op] = _by_derivative(act)
    return table

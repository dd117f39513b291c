"""Backward formulas of flambeau-nn's linear ops (used where a backend runs ``nn_linear`` /
``nn_bilinear`` with a kernel of its own; the composites' graphs differentiate themselves)."""
from __future__ import annotations

from typing import Any

from flambeau.autograd.formula import Formula


def _linear(ctx: Any, g: Any) -> tuple:
    input, weight, bias = ctx.args
    gi = gw = gb = None
    if weight.ndim == 2:
        if ctx.needs(0):
            gi = g.matmul(weight)
        if ctx.needs(1):
            # every leading index of the input is one row of the product: sum over all of them
            gw = g.reshape(-1, g.shape[-1]).t().mm(input.reshape(-1, input.shape[-1]))
    else:  # a 1-D weight: out = input @ weight, one number per row
        if ctx.needs(0):
            gi = g.unsqueeze(-1) * weight
        if ctx.needs(1):
            gw = (g.unsqueeze(-1) * input).reshape(-1, input.shape[-1]).sum(0)
    if ctx.needs(2):
        gb = g  # the engine sums it back to the bias's (broadcast) shape
    return gi, gw, gb


def _bilinear(ctx: Any, g: Any) -> tuple:
    x1, x2, weight, bias = ctx.args
    g1 = g2 = gw = gb = None
    if ctx.needs(0):  # dL/dx1[i] = sum_o g[o] sum_j W[o,i,j] x2[j]
        g1 = flambeau_einsum("...o,oij,...j->...i", g, weight, x2)
    if ctx.needs(1):
        g2 = flambeau_einsum("...o,oij,...i->...j", g, weight, x1)
    if ctx.needs(2):
        gw = flambeau_einsum("...o,...i,...j->oij", g, x1, x2)
    if ctx.needs(3):
        gb = g
    return g1, g2, gw, gb


def flambeau_einsum(equation: str, *operands: Any) -> Any:
    import flambeau

    return flambeau.einsum(equation, *operands)


def formulas() -> dict[str, Any]:
    return {
        "nn_linear": Formula(_linear, save=("input", "weight"),
                             save_if={"input": ("weight",), "weight": ("input",)}),
        "nn_bilinear": Formula(_bilinear, save=("input1", "input2", "weight")),
    }

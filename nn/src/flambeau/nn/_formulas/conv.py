"""Backward formulas of flambeau-nn's convolution ops (used where a backend runs ``nn_convolution``'s kernel).

Without a graph of the gradient wanted, the gradients come from ``nn_convolution_backward`` (a
kernel where the backend has one), only those that are needed. With ``create_graph=True`` they are
computed with differentiable flambeau ops (the composite's im2col/col2im), so that double backward
sees how they depend on the gradient, the input and the weight.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

from .._ops import _conv_math as C

_BOUND: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The op ``name``, bound at first use: formulas are imported while the registry is being filled."""
    fn = _BOUND.get(name)
    if fn is None:
        fn = _BOUND[name] = fb.ops.function(name)
    return fn


def _convolution(ctx: Any, g: Any) -> tuple:
    input, weight, _bias, stride, padding, dilation, transposed, output_padding, groups = ctx.args
    mask = (ctx.needs(0), ctx.needs(1), ctx.needs(2))
    if g is None or not any(mask):
        return (None,) * 9
    if fb.is_grad_enabled():
        geo = C.geometry(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
        index = C.window_index(geo, input.device)
        gi = C.grad_input(g, weight, geo, index) if mask[0] else None
        gw = C.grad_weight(g, input, weight, geo, index) if mask[1] else None
        gb = C.grad_bias(g) if mask[2] else None
    else:
        gi, gw, gb = _op("nn_convolution_backward")(g, input, weight, stride, padding, dilation, transposed,
                                                    output_padding, groups, list(mask))
    return (gi if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None) + (None,) * 6


def formulas() -> dict[str, Any]:
    return {"nn_convolution": Formula(_convolution, save=("input", "weight"))}

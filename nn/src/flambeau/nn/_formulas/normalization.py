"""Backward formulas of flambeau-nn's normalization ops (used where a backend runs the op's kernel).

Without a graph of the gradient wanted, they call the fused backward op (``nn_*_norm_backward``,
a kernel where the backend has one). With ``create_graph=True`` they compute the same gradients
with differentiable flambeau ops, recomputing the statistics from the input so that the second
derivative sees how they depend on it.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

from .._ops import _norm_math as M

_BOUND: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The op ``name``, bound at first use: formulas are imported while the registry is being filled."""
    fn = _BOUND.get(name)
    if fn is None:
        fn = _BOUND[name] = fb.ops.function(name)
    return fn


def _layer_norm(ctx: Any, grads: list) -> tuple:
    input, normalized_shape, weight, _bias, eps = ctx.args
    g = grads[0]
    if g is None:
        return (None,) * 5
    shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    if fb.is_grad_enabled():
        _, mean, rstd = M.layer_norm(input, shape, None, None, eps)
        gx, gw, gb = M.layer_norm_backward(g, input, mean, rstd, shape, weight)
    else:
        _, mean, rstd = ctx.result
        gx, gw, gb = _op("nn_layer_norm_backward")(g, input, mean, rstd, shape, weight)
    return (gx if ctx.needs(0) else None, None, gw if ctx.needs(2) else None, gb if ctx.needs(3) else None, None)


def _batch_norm(ctx: Any, grads: list) -> tuple:
    input, weight, _bias, _running_mean, _running_var, training, eps = ctx.args
    g = grads[0]
    if g is None:
        return (None,) * 7
    # In evaluation the op returned copies of the running statistics, constants of the input; the
    # running tensors themselves are not saved, since training updates them in place after the op.
    _, mean, var = ctx.result
    if fb.is_grad_enabled():
        if training:
            _, mean, var = M.batch_norm(input, None, None, None, None, True, eps)
        gx, gw, gb = M.batch_norm_backward(g, input, mean, var, weight, training, eps)
    else:
        gx, gw, gb = _op("nn_batch_norm_backward")(g, input, mean, var, weight, training, eps)
    return (gx if ctx.needs(0) else None, gw if ctx.needs(1) else None, gb if ctx.needs(2) else None,
            None, None, None, None)


def formulas() -> dict[str, Any]:
    return {
        "nn_layer_norm": Formula(_layer_norm, save=("input", "weight"), result=True, nondiff_outputs=(1, 2)),
        "nn_batch_norm": Formula(_batch_norm, save=("input", "weight"), result=True,
                                 nondiff_outputs=(1, 2)),
    }

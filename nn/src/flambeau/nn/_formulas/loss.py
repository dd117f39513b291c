"""Backward formulas of flambeau-nn's loss ops.

The first derivatives go through the backward ops (``nn_nll_loss_backward``,
``nn_cross_entropy_backward``), which a backend may fuse. ``nn_nll_loss_backward`` is linear in its
upstream gradient and has its own formula, so that it differentiates again; cross-entropy's
gradient under ``create_graph=True`` is its composite, written with differentiable flambeau ops.
"""
from __future__ import annotations

from typing import Any

import flambeau
from flambeau.autograd.formula import Formula


def _op(name: str):
    # looked up when a backward runs: formulas are registered while the ops are still being loaded
    return flambeau.ops.function(name)


def _nll(ctx, g):
    input, target, weight, reduction, ignore_index = ctx.args
    return _op("nn_nll_loss_backward")(g, input, target, weight, reduction, ignore_index)


def _nll_backward(ctx, gg):
    # nll_loss is linear in its input, so its gradient is linear in grad_output with nll_loss as adjoint
    _g, _input, target, weight, reduction, ignore_index = ctx.args
    return _op("nn_nll_loss")(gg, target, weight, reduction, ignore_index)


def _cross_entropy(ctx, g):
    input, target, weight, reduction, ignore_index, label_smoothing = ctx.args
    if flambeau.is_grad_enabled():  # create_graph: the differentiable composite
        from .._ops.loss import cross_entropy_backward_composite

        return cross_entropy_backward_composite(g, input, target, weight, reduction, ignore_index, label_smoothing)
    return _op("nn_cross_entropy_backward")(g, input, target, weight, reduction, ignore_index, label_smoothing)


def formulas() -> dict[str, Any]:
    return {
        "nn_nll_loss": Formula(_nll, save=("input", "target", "weight")),
        "nn_nll_loss_backward": Formula(_nll_backward, save=("target", "weight")),
        "nn_cross_entropy": Formula(_cross_entropy, save=("input", "target", "weight")),
    }

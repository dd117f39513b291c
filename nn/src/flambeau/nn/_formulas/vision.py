"""Backward formulas of flambeau-nn's vision ops (used where a backend runs the op with a kernel of its
own; the composites' graphs differentiate themselves).

``nn_resample`` is linear in its input, with constant taps: its gradient is ``nn_resample_backward``
(the transposed map), and that one's gradient is ``nn_resample`` again, so derivatives of any order
work. The taps (index and weight) are computed from sizes and get no gradient.
``nn_grid_sample_bilinear2d``'s gradients come from its backward op (first order only, as PyTorch's).
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

_BOUND: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The op ``name``, bound at first use: formulas are imported while the registry is being filled."""
    fn = _BOUND.get(name)
    if fn is None:
        fn = _BOUND[name] = fb.ops.function(name)
    return fn


def _resample(ctx: Any, g: Any) -> tuple:
    _input, index, weight, taps = ctx.args
    return (_op("nn_resample_backward")(g, index, weight, tuple(ctx.shape(0)), taps), None, None)


def _resample_backward(ctx: Any, g: Any) -> tuple:
    _grad_output, index, weight, _input_size, taps = ctx.args
    return (_op("nn_resample")(g, index, weight, taps), None, None)


def _grid_sample(ctx: Any, g: Any) -> tuple:
    input, grid, padding_mode, align_corners = ctx.args
    if g is None:
        return (None, None)
    gx, gg = _op("nn_grid_sample_bilinear2d_backward")(g, input, grid, padding_mode, align_corners)
    return (gx if ctx.needs(0) else None, gg if ctx.needs(1) else None)


def formulas() -> dict[str, Any]:
    return {
        "nn_resample": Formula(_resample, save=("index", "weight")),
        "nn_resample_backward": Formula(_resample_backward, save=("index", "weight")),
        # PyTorch's grid_sampler_2d_backward has no derivative either: no double backward
        "nn_grid_sample_bilinear2d": Formula(_grid_sample, save=("input", "grid")),
    }

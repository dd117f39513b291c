"""Backward formulas of flambeau-nn's vision ops (used where a backend runs the op with a kernel of its
own; the composites' graphs differentiate themselves).

``nn_resample`` is linear in its input, with constant taps: its gradient is ``nn_resample_backward``
(the transposed map), and that one's gradient is ``nn_resample`` again, so derivatives of any order
work. The taps (index and weight) are computed from sizes and get no gradient.
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


def formulas() -> dict[str, Any]:
    return {
        "nn_resample": Formula(_resample, save=("index", "weight")),
        "nn_resample_backward": Formula(_resample_backward, save=("index", "weight")),
    }

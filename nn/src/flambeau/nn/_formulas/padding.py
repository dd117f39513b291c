"""Backward formulas of flambeau-nn's padding ops (used where a backend runs the op with a kernel of its
own; the composites' graphs differentiate themselves).

Every padding op is linear in its input: constant padding's gradient is constant padding with the
pads negated (a crop, and zeros where the forward cropped); reflect/replicate padding's gradient
is its ``*_backward`` op, whose own gradient is the padding again, so any order of derivative works.
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


def _constant_pad(ctx: Any, g: Any) -> tuple:
    _input, pad, _value = ctx.args
    return (_op("nn_constant_pad_nd")(g, tuple(-p for p in pad), 0),)


def _pad_nd(name: str):
    def formula(ctx: Any, g: Any) -> tuple:
        input, pad = ctx.args
        return (_op(f"nn_{name}_pad_backward")(g, input, pad),)
    return formula


def _pad_nd_backward(name: str):
    def formula(ctx: Any, g: Any) -> tuple:
        _grad_output, _input, pad = ctx.args
        return (_op(f"nn_{name}_pad")(g, pad), None)
    return formula


def formulas() -> dict[str, Any]:
    table: dict[str, Any] = {"nn_constant_pad_nd": Formula(_constant_pad)}
    for name in ("reflection", "replication"):
        table[f"nn_{name}_pad"] = Formula(_pad_nd(name), save=("input",))
        table[f"nn_{name}_pad_backward"] = Formula(_pad_nd_backward(name), save=("input",))
    return table

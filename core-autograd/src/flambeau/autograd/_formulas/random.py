"""Backward formulas of the random ops whose outputs PyTorch connects to the graph, all zero.

As PyTorch's: ``normal(mean, std)`` with tensor parameters, ``bernoulli``, ``poisson``, and the in-place
samplers (``uniform_``, ``normal_``...) applied to a tensor that requires grad give outputs that require
grad, and the derivatives with respect to their tensor arguments are zero. A draw is not
reparameterised: ``mean + std * flambeau.randn_like(std)`` is (as ``Normal.rsample`` does).
"""
from __future__ import annotations

from ..formula import Formula
from ._helpers import zeros

#: Each op with the positions of its tensor arguments.
ZERO_GRADIENT_OPS = {
    "normal_tensor": (0, 1), "bernoulli": (0, 1), "poisson": (0,), "uniform": (0,), "normal": (0,),
    "cauchy": (0,), "exponential": (0,), "geometric": (0,), "log_normal": (0,), "random": (0,),
}


def _zero_gradients(positions: tuple[int, ...]) -> Formula:
    def backward(ctx, g):
        return tuple(zeros(ctx.shape(i), g) if ctx.needs(i) else None for i in positions)
    return Formula(backward)


def formulas() -> dict[str, Formula]:
    return {op: _zero_gradients(positions) for op, positions in ZERO_GRADIENT_OPS.items()}

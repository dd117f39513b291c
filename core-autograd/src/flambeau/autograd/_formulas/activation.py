"""Backward formulas of the activation ops in ``flambeau._core_ops.activation`` that backends run as
kernels. The others there are composites: autograd differentiates through the ops they are written
with, so they need no formula of their own."""
from __future__ import annotations

from ..formula import Formula


def _relu(ctx, g):
    # relu'(0) = 0, as in PyTorch (its threshold_backward passes the gradient where the result is > 0)
    import flambeau

    return flambeau.where(ctx.result > 0, g, 0.0)


def formulas() -> dict[str, Formula]:
    return {"relu": Formula(_relu, result=True)}

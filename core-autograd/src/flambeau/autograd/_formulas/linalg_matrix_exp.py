r"""Backward formula of ``matrix_exp``, through the Fréchet derivative.

The Fréchet derivative ``L(A, E) = sum_k sum_{j<k} A^j E A^{k-1-j} / k!`` is the directional
derivative of ``exp`` at ``A``; for the block matrix ``M = [[A, E], [0, A]]``,
``exp(M) = [[exp(A), L(A, E)], [0, exp(A)]]`` (Higham, "Functions of Matrices", thm. 3.6 /
Mathias 1996). The gradient of ``<G, exp(A)>`` (``<X, Y> = Re tr(X^H Y)``) is the adjoint
``L(A, .)^*(G) = L(A^H, G)``: each term ``A^j E A^{k-1-j}`` has adjoint
``(A^H)^j G (A^H)^{k-1-j}``. So

    grad_A = top-right block of exp([[A^H, G], [0, A^H]]),

one matrix exponential of twice the size, written with ``matrix_exp`` itself so that it
differentiates again. For a real ``A`` everything stays real.
"""
from __future__ import annotations

from typing import Any

from ..formula import Formula


def _matrix_exp(ctx: Any, g: Any) -> Any:
    import flambeau
    from flambeau.ops._registry import FUNCTIONS

    (A,) = ctx.args
    n = A.shape[-1]
    AH = A.mH
    g = g.to(A.dtype) if g.dtype is not A.dtype else g
    batch = tuple(A.shape[:-2])
    g = g.expand(batch + (n, n)) if tuple(g.shape) != batch + (n, n) else g
    zero = flambeau.zeros(batch + (n, n), dtype=A.dtype, device=A.device)
    top = FUNCTIONS["cat"]([AH, g], -1)
    bottom = FUNCTIONS["cat"]([zero, AH], -1)
    block = FUNCTIONS["cat"]([top, bottom], -2)
    return FUNCTIONS["matrix_exp"](block)[..., :n, n:]


def formulas() -> dict[str, Formula]:
    return {"matrix_exp": Formula(_matrix_exp, save=("A",))}

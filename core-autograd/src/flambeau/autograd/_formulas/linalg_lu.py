"""Backward formulas of the LU ops: ``linalg.lu`` (P, L, U), ``linalg.lu_factor`` (LU, pivots) and
``linalg.lu_solve``.

Derivation (square, wide and tall ``A = P L U``; ``L`` (m, k) unit lower, ``U`` (k, n) upper,
``k = min(m, n)``, ``P`` a constant permutation; ``<X, Y> = Re tr(X^H Y)``, so that the result is
PyTorch's conjugate-Wirtinger gradient for complex inputs):

With ``dX = P^T dA`` the differential of ``A = P L U`` is ``dX = dL U + L dU``.

- Square: ``M = L^{-1} dX U^{-1} = L^{-1} dL + dU U^{-1}``; the first term is strictly lower
  (``L`` has a constant unit diagonal), the second upper, so ``dL = L tril_{-1}(M)`` and
  ``dU = triu(M) U``. Then ``<gL, dL> + <gU, dU> = <phi, M>`` with
  ``phi = tril_{-1}(L^H gL) + triu(gU U^H)`` and ``gA = P L^{-H} phi U^{-H}``.
- Wide (m < n), ``U = [U1 | U2]``: ``M`` as above with ``U1``; ``dU2 = L^{-1} dX2 - tril_{-1}(M) U2``
  adds ``<L^{-H} gU2, dX2>`` and moves ``-tril_{-1}(gU2 U2^H)`` into ``phi``:
  ``gA = P L^{-H} [phi U1^{-H} | gU2]``, ``phi = tril_{-1}(L^H gL - gU2 U2^H) + triu(gU1 U1^H)``.
- Tall (m > n), ``L = [L1; L2]``: ``M`` as above with ``L1``; ``dL2 = dX2 U^{-1} - L2 triu(M)``
  adds ``<gL2 U^{-H}, dX2>`` and moves ``-triu(L2^H gL2)`` into ``phi``:
  ``gA = P [L1^{-H} phi; gL2] U^{-H}``, ``phi = tril_{-1}(L1^H gL1) + triu(gU U^H - L2^H gL2)``.

``lu_solve`` is ``solve`` with ``A = P L U`` given by its factors: the gradient ``gA`` of the
matching ``solve`` goes back through the product, ``gL = tril_{-1}(P^T gA U^H)``,
``gU = triu(L^H P^T gA)``, and the compact ``LU`` holds both. All written with flambeau ops, so
that second derivatives follow (full-rank inputs: ``U``'s leading square block must be invertible).
"""
from __future__ import annotations

from typing import Any

from flambeau._tensor import Tensor

from ..formula import Formula


def _fn(name: str) -> Any:
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _st(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unit: bool = False) -> Tensor:
    return _fn("linalg_solve_triangular")(A, B, upper=upper, left=left, unitriangular=unit)


def _zeros_if_none(g: Tensor | None, like: Tensor) -> Tensor:
    import flambeau

    return flambeau.zeros_like(like) if g is None else g


def lu_backward(L: Tensor, U: Tensor, gL: Tensor | None, gU: Tensor | None) -> Tensor:
    """``G`` with ``gA = P G`` for ``A = P L U`` (see the module docstring). Entries of ``gL`` on or
    above the diagonal, and of ``gU`` below it, are ignored: they belong to no free entry."""
    gL, gU = _zeros_if_none(gL, L), _zeros_if_none(gU, U)
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        phi = L.mH.matmul(gL).tril(-1) + gU.matmul(U.mH).triu()
        return _st(U.mH, _st(L.mH, phi, upper=True, unit=True), upper=False, left=False)
    if m < n:
        U1, U2 = U[..., :, :m], U[..., :, m:]
        gU1, gU2 = gU[..., :, :m], gU[..., :, m:]
        phi = (L.mH.matmul(gL) - gU2.matmul(U2.mH)).tril(-1) + gU1.matmul(U1.mH).triu()
        G = _fn("cat")([_st(U1.mH, phi, upper=False, left=False), gU2], -1)
        return _st(L.mH, G, upper=True, unit=True)
    L1, L2 = L[..., :n, :], L[..., n:, :]
    gL1, gL2 = gL[..., :n, :], gL[..., n:, :]
    phi = L1.mH.matmul(gL1).tril(-1) + (gU.matmul(U.mH) - L2.mH.matmul(gL2)).triu()
    G = _fn("cat")([_st(L1.mH, phi, upper=True, unit=True), gL2], -2)
    return _st(U.mH, G, upper=False, left=False)


# -- pivots as a permutation ------------------------------------------------------------------

def pivots_to_perm(pivots: Tensor, m: int) -> Tensor:
    """The row permutation LAPACK's 1-based ``pivots`` stand for: ``(P^T A)[..., r, :] = A[..., perm[r], :]``.

    LAPACK swapped row ``i`` with row ``pivots[i] - 1`` for ``i = 0, 1, ...`` in turn; the same
    swaps applied to ``range(m)`` give ``perm``. The swaps are sequential and the pivots are
    integers without gradient, so they are replayed in Python (``tolist`` works on every device):
    one list swap each, where a batched tensor formulation costs several op dispatches per pivot.
    """
    import flambeau

    batch = tuple(pivots.shape[:-1])
    rows = pivots.reshape(-1, pivots.shape[-1]).tolist() if pivots.numel() else [[]] * _count(batch)
    perms = []
    for piv in rows:
        perm = list(range(m))
        for i, p in enumerate(piv):
            perm[i], perm[p - 1] = perm[p - 1], perm[i]
        perms.append(perm)
    return flambeau.tensor(perms, dtype=flambeau.int64, device=pivots.device).reshape(*batch, m)


def _count(batch: tuple) -> int:
    n = 1
    for b in batch:
        n *= b
    return n


def _rows(X: Tensor, perm: Tensor) -> Tensor:
    """``X[..., perm, :]`` batched (``perm``'s batch broadcasts to ``X``'s)."""
    index = perm.unsqueeze(-1).expand(*X.shape[:-1], X.shape[-1])
    return X.gather(-2, index)


def apply_p(perm: Tensor, G: Tensor) -> Tensor:
    """``P G`` for the ``P`` of ``perm`` (``P^T`` gathers rows by ``perm``; ``P`` by its inverse)."""
    return _rows(G, perm.argsort(-1))


def apply_pt(perm: Tensor, G: Tensor) -> Tensor:
    """``P^T G`` for the ``P`` of ``perm``."""
    return _rows(G, perm)


def unpack(LU: Tensor) -> tuple[Tensor, Tensor]:
    """``(L, U)`` from ``lu_factor``'s compact ``LU`` (differentiable in ``LU``)."""
    import flambeau

    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + flambeau.eye(m, k, dtype=LU.dtype, device=LU.device)
    return L, LU[..., :k, :].triu()


# -- the formulas -----------------------------------------------------------------------------

def _lu(ctx, grads):
    _, gL, gU = grads
    if gL is None and gU is None:
        return None
    P, L, U = ctx.result
    return P.matmul(lu_backward(L, U, gL, gU))


def _lu_factor(ctx, grads):
    gLU = grads[0]
    if gLU is None:
        return None
    LU, pivots = ctx.result
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L, U = unpack(LU)
    # the compact gradient splits like LU itself; lu_backward ignores the parts off each triangle
    G = lu_backward(L, U, gLU[..., :, :k], gLU[..., :k, :])
    return apply_p(pivots_to_perm(pivots, m), G)


def _lu_solve(ctx, g):
    LU, pivots, _, left, adjoint = ctx.args
    X = ctx.result
    solve = _fn("linalg_lu_solve")
    # gB solves the adjoint system; gA is what solve(A, B)'s formula gives A for each form
    gB = solve(LU, pivots, g, left=left, adjoint=not adjoint)
    gLU = None
    if ctx.needs(0):
        if left:
            gA = -X.matmul(gB.mH) if adjoint else -gB.matmul(X.mH)
        else:
            gA = -gB.mH.matmul(X) if adjoint else -X.mH.matmul(gB)
        L, U = unpack(LU)
        PtgA = apply_pt(pivots_to_perm(pivots, LU.shape[-2]), gA)
        gLU = PtgA.matmul(U.mH).tril(-1) + L.mH.matmul(PtgA).triu()
    return gLU, None, (gB if ctx.needs(2) else None)


def formulas() -> dict[str, Formula]:
    return {
        "linalg_lu": Formula(_lu, result=True, nondiff_outputs=(0,)),  # P, as in PyTorch
        "linalg_lu_factor": Formula(_lu_factor, result=True),
        "linalg_lu_solve": Formula(_lu_solve, save=("LU", "pivots"), result=True),
    }

"""Backward formulas of ``linalg.eig`` and ``linalg.eigvals`` (general square matrices, complex outputs).

Derivation, for ``A V = V diag(w)`` with distinct eigenvalues and unit-norm eigenvectors
(``<X, Y> = Re tr(X^H Y)``, so the result is PyTorch's conjugate-Wirtinger gradient):

Differentiating, ``V^{-1} dA V = diag(dw) + C diag(w) - diag(w) C`` with ``C = V^{-1} dV``, so
``dw_i = (V^{-1} dA V)_ii`` and ``C_ij = (V^{-1} dA V)_ij / (w_j - w_i)`` off the diagonal. The
diagonal of ``C`` is fixed by the normalisation: ``Re(v_i^H dv_i) = 0`` gives
``Re C_ii = -Re sum_{k != i} (V^H V)_ik C_ki``, and ``Im C_ii`` is the free phase of ``v_i``.
With ``D = V^H gV``, ``<gV, dV> = <D, C>``; substituting ``Re C_ii`` turns it into
``<D - V^H V diag(Re diag D), C_off>``. Hence

    gA = V^{-H} (diag(gw) + (D - V^H V diag(Re diag D)) / conj(E)) V^H,   E_ij = w_j - w_i (i != j).

The phase term drops out only when the loss does not depend on the eigenvectors' phases, which
is when ``Im diag D = 0``; PyTorch refuses the backward otherwise, and so does this one. For a
real ``A`` the gradient is the real part. ``eigvals``'s gradient is the ``gV = 0`` case, with the
eigenvectors recomputed (through ``eig`` itself, so that it differentiates again).
"""
from __future__ import annotations

from typing import Any

from flambeau._tensor import Tensor

from ..formula import Formula


def _fn(name: str) -> Any:
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def check_phase_invariant(VhgV: Tensor, op: str) -> None:
    """Raise PyTorch's error when the loss depends on the eigenvectors' phases (complex case)."""
    if not VhgV.dtype.is_complex:
        return
    imag = VhgV.diagonal(0, -2, -1).imag
    # PyTorch's tolerance: allclose(imag, 0, rtol=1e-2, atol=1e-2)
    if imag.numel() and not bool((imag.abs() <= 1e-2).all()):
        raise RuntimeError(f"{op}: The eigenvectors in the complex case are specified up to multiplication by "
                           "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


def eig_backward(w: Tensor, V: Tensor, gw: Tensor | None, gV: Tensor | None) -> Tensor:
    """The (complex) gradient of ``A`` from those of ``eig``'s eigenvalues ``w`` and eigenvectors ``V``."""
    import flambeau

    Vh = V.mH
    inner = flambeau.zeros_like(V) if gw is None else flambeau.diag_embed(gw.to(V.dtype))
    if gV is not None:
        n = w.shape[-1]
        D = Vh.matmul(gV)
        check_phase_invariant(D, "linalg_eig_backward")
        eye = flambeau.eye(n, dtype=V.dtype, device=V.device)
        E = w.unsqueeze(-2) - w.unsqueeze(-1)  # E_ij = w_j - w_i
        safe = flambeau.where(eye.bool(), 1.0, E.conj())
        re_diag = D.diagonal(0, -2, -1).real.to(V.dtype)
        off = (D - Vh.matmul(V) * re_diag.unsqueeze(-2)) / safe
        inner = inner + off * (1 - eye)
    # V^{-H} inner V^H
    return _fn("linalg_solve")(Vh, inner.matmul(Vh))


def _real_if(g: Tensor, dtype: Any) -> Tensor:
    return g.real if g.dtype.is_complex and not dtype.is_complex else g


def _eig(ctx, grads):
    gw, gV = grads
    if gw is None and gV is None:
        return None
    w, V = ctx.result
    return _real_if(eig_backward(w, V, gw, gV), ctx.dtype(0))


def _eigvals(ctx, g):
    (A,) = ctx.args
    w, V = _fn("linalg_eig")(A)
    return _real_if(eig_backward(w, V, g, None), ctx.dtype(0))


def formulas() -> dict[str, Formula]:
    return {
        "linalg_eig": Formula(_eig, result=True),
        "linalg_eigvals": Formula(_eigvals, save=("A",)),
    }

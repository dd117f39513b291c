"""The gradient of ``linalg.det``, correct for singular matrices as well.

``d det(A) = tr(adj(A) dA)``, and ``det`` is holomorphic, so its conjugate-Wirtinger gradient is
``g * adj(A)^H`` (``adj``: the adjugate, the transposed cofactor matrix). For an invertible ``A``
that is ``g * conj(det A) * A^{-H}``, computed from ``A = P L U`` with two triangular solves. That
form breaks down as ``A`` becomes singular (``det -> 0`` while ``A^{-1}`` blows up), yet the
adjugate stays smooth: from the SVD ``A = U diag(s) V^H``,

    adj(A) = det(U) det(V^H) V diag(pi) U^H,   pi_i = prod_{j != i} s_j,

so ``g * adj(A)^H = g * conj(det(U) det(V^H)) * U diag(pi) V^H``, exact at any rank (for rank
``n - 1`` it is the rank-one cofactor matrix, for rank ``< n - 1`` zero). The SVD costs several
LUs, so it is used only for the matrices whose LU looks nearly singular: a pivot below
``sqrt(eps)`` times the largest, where the inverse would lose more than half the digits. The
regular path is ``lu_factor`` and one adjoint ``lu_solve``; both differentiate again.
"""
from __future__ import annotations

from typing import Any

from flambeau._tensor import Tensor


def _fn(name: str) -> Any:
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _eye_like(A: Tensor) -> Tensor:
    import flambeau

    return flambeau.eye(A.shape[-1], dtype=A.dtype, device=A.device)


def _batch_matrix(x: Tensor) -> Tensor:
    return x.unsqueeze(-1).unsqueeze(-1)


def _factor(A: Tensor) -> tuple[Tensor, Tensor] | None:
    """``lu_factor(A)``, or None when the backend refuses an exactly zero pivot (PyTorch's lu_factor
    does too): the caller then knows some matrix is singular."""
    try:
        return _fn("linalg_lu_factor")(A)
    except RuntimeError:
        return None


def _via_lu(LU: Tensor, pivots: Tensor, scale: Tensor) -> Tensor:
    """``scale * A^{-H}`` from ``lu_factor``'s output (one ``lu_solve`` with the adjoint)."""
    rhs = _batch_matrix(scale) * _eye_like(LU)
    return _fn("linalg_lu_solve")(LU, pivots, rhs, adjoint=True)


def scaled_inverse_h(A: Tensor, scale: Tensor) -> Tensor:
    """``scale * A^{-H}``; a singular ``A`` gives infinities or NaNs, not an error (slogdet's
    gradient there is unbounded; PyTorch returns non-finite values as well)."""
    factors = _factor(A)
    if factors is not None:
        return _via_lu(*factors, scale)
    # an exactly singular matrix: A^{-H} = P L^{-H} U^{-H} with triangular solves that do not refuse
    st = _fn("linalg_solve_triangular")
    P, L, U = _fn("linalg_lu")(A)
    Y = st(U.mH, _batch_matrix(scale) * _eye_like(U), upper=False)
    return P.matmul(st(L.mH, Y, upper=True, unitriangular=True))


def _exclusive_products(s: Tensor) -> Tensor:
    """``pi_i = prod_{j != i} s_j`` along the last dim, without dividing (``s`` may hold zeros)."""
    import flambeau

    one = flambeau.ones_like(s[..., :1])
    before = flambeau.cat([one, s[..., :-1]], -1).cumprod(-1)
    after = flambeau.cat([s[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)
    return before * after


def _via_svd(A: Tensor, g: Tensor) -> Tensor:
    """``g * adj(A)^H`` from the SVD (see the module docstring).

    The singular values are taken as ``s_i = u_i^H A v_i`` rather than from the SVD's ``S``: the
    same values, but differentiated through ``A`` directly they give the complex derivative
    ``u_i^H dA v_i`` of the "signed" singular value, where ``S``'s gradient sees only its real
    part. At a zero singular value that imaginary part is what the second derivative needs (the
    phases of ``u_i`` and ``v_i`` are then free, and the SVD's own backward cannot recover it).
    """
    det = _fn("linalg_det")
    U, _, Vh = _fn("linalg_svd")(A, False)
    s = (U.conj() * A.matmul(Vh.mH)).sum(-2)
    c_pi = _exclusive_products(s) * (det(U) * det(Vh)).unsqueeze(-1)  # adj(A) = V diag(c pi) U^H
    return _batch_matrix(g) * (U * c_pi.conj().unsqueeze(-2)).matmul(Vh)


def _nearly_singular(LU: Tensor) -> Tensor:
    """Per matrix: a pivot below ``sqrt(eps)`` times the largest one."""
    import flambeau

    pivots = LU.diagonal(0, -2, -1).abs()
    tol = flambeau.finfo(pivots.dtype).eps ** 0.5
    return pivots.amin(-1) <= tol * pivots.amax(-1)


def det_backward(A: Tensor, det: Tensor, g: Tensor) -> Tensor:
    """The gradient of ``A`` for ``det = linalg.det(A)`` and its output gradient ``g``."""
    import flambeau

    if A.numel() == 0:
        return flambeau.zeros_like(A)
    factors = _factor(A)
    if factors is not None:
        singular = _nearly_singular(factors[0])
        if not bool(singular.any()):
            return _via_lu(*factors, g * det.conj())
    else:  # an exactly zero pivot: linalg.lu, which does not refuse, tells which matrices
        singular = _nearly_singular(_fn("linalg_lu")(A)[2])
    adj = _via_svd(A, g)
    if bool(singular.all()):
        return adj
    # A mixed batch: the invertible matrices keep the LU form; the others get the identity there,
    # so that no infinity reaches where's unused branch (its gradient would turn it into NaN).
    mask = _batch_matrix(singular)
    LU, pivots = _fn("linalg_lu_factor")(flambeau.where(mask, _eye_like(A), A))
    regular = _via_lu(LU, pivots, g * flambeau.where(singular, 1.0, det).conj())
    return flambeau.where(mask, adj, regular)

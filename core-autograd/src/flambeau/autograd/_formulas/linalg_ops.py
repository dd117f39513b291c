"""Backward formulas of ``flambeau.linalg``'s primitive ops (the composites differentiate through
the ops they are built from).

Written for real inputs first, following the usual matrix-calculus results (Giles 2008 for inv,
det and solve; Murray 2016 for cholesky; Walter & Lehmann / Liao et al. for qr; Townsend 2016
for svd). Complex inputs use the same formulas with conjugate transposes, which is exact for
the holomorphic ops (inv, solve, det) and for the factorisations up to their phase freedom.
"""
from __future__ import annotations

from typing import Any

from ..formula import Formula
from ._helpers import conj, unsqueeze_dims, reduction_dims
from .linalg_det import det_backward, scaled_inverse_h
from .linalg_eig import check_phase_invariant


def _fn(name: str) -> Any:
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _eye(n: int, like: Any) -> Any:
    return _fn("eye")(n, dtype=like.dtype, device=like.device)


def _real_if(g: Any, dtype: Any) -> Any:
    """A gradient for a real input: the real part of a complex one."""
    return g.real if g.dtype.is_complex and not dtype.is_complex else g


# -- norms --------------------------------------------------------------------------------------

def _vector_norm(ctx, g):
    import flambeau

    x, ord, dim, keepdim, dtype = ctx.args
    r = ctx.result
    dims = reduction_dims(dim, x.ndim)
    g = unsqueeze_dims(g, dims, x.ndim, keepdim)
    r = unsqueeze_dims(r, dims, x.ndim, keepdim)
    if dtype is not None:
        x = x.to(dtype)
    if ord == 0:
        return flambeau.zeros_like(x)
    if ord == 2:
        safe = flambeau.where(r == 0, 1.0, r)
        return flambeau.where(r == 0, 0.0, g / safe) * x
    a = x.abs()
    if ord in (float("inf"), float("-inf")):
        mask = (a == r).to(g.dtype)
        count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
        return x.sgn() * (g * mask / count)
    if ord == 1:
        return x.sgn() * g
    safe = flambeau.where(r == 0, 1.0, r)
    scale = flambeau.where(r == 0, 0.0, g / safe.pow(ord - 1))
    return x.sgn() * a.pow(ord - 1) * scale


# -- determinants and inverses -------------------------------------------------------------

def _det(ctx, g):
    (A,) = ctx.args
    return det_backward(A, ctx.result, g)


def _slogdet(ctx, grads):
    import flambeau

    (A,) = ctx.args
    g_sign, g_logabs = grads
    # d log|det| = Re tr(A^{-1} dA) and, for complex A, the phase sign = e^{i theta} moves with
    # d theta = Im tr(A^{-1} dA): the gradient is (g_logabs + i Im(g_sign conj(sign))) A^{-H}.
    # A real sign is piecewise constant: no gradient.
    complex_sign = A.dtype.is_complex and g_sign is not None
    if g_logabs is None and not complex_sign:
        return None
    scale = flambeau.zeros_like(ctx.result[1]) if g_logabs is None else g_logabs
    scale = scale.to(A.dtype)
    if complex_sign:
        scale = scale + 1j * (g_sign * ctx.result[0].conj()).imag
    return scaled_inverse_h(A, scale)


def _inv_backward(Ainv: Any, g: Any) -> Any:
    h = Ainv.mH
    return -h.matmul(g).matmul(h)


def _inv(ctx, g):
    return _inv_backward(ctx.result, g)


def _inv_ex(ctx, grads):
    if grads[0] is None:
        return None
    return _inv_backward(ctx.result[0], grads[0])


# -- solvers ---------------------------------------------------------------------------------

def _solve(ctx, g):
    from flambeau._core_ops.linalg_ops import is_vector_rhs

    A, B, left = ctx.args
    X = ctx.result
    vector = left and is_vector_rhs(A, B) if B is not None else left and X.ndim == A.ndim - 1
    if vector:
        g, X = g.unsqueeze(-1), X.unsqueeze(-1)
    solve = _fn("linalg_solve")
    if left:
        gB = solve(A.mH, g)
        gA = -gB.matmul(X.mH) if ctx.needs(0) else None
    else:
        gB = solve(A.mH, g, left=False)
        gA = -X.mH.matmul(gB) if ctx.needs(0) else None
    if vector:
        gB = gB.squeeze(-1)
    return gA, (gB if ctx.needs(1) else None)


def _triangle(G: Any, upper: bool, unit: bool) -> Any:
    G = G.triu() if upper else G.tril()
    return G.triu(1) if unit and upper else (G.tril(-1) if unit else G)


def _solve_triangular(ctx, g):
    A, _, upper, left, unit = ctx.args
    X = ctx.result
    st = _fn("linalg_solve_triangular")
    gB = st(A.mH, g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if ctx.needs(0):
        gA = _triangle(-gB.matmul(X.mH) if left else -X.mH.matmul(gB), upper, unit)
    return gA, (gB if ctx.needs(1) else None)


def _lstsq(ctx, grads):
    A, B, _, _ = ctx.args
    g, g_res = grads[0], grads[1]
    X = ctx.result[0]
    vector = B.ndim == A.ndim - 1
    if vector:
        X, B = X.unsqueeze(-1), B.unsqueeze(-1)
    gA = gB = None
    if g is not None:
        gA, gB = _lstsq_solution_grad(A, B, X, g.unsqueeze(-1) if vector else g)
    if g_res is not None and g_res.numel():
        # residuals r_k = ||A x_k - b_k||^2 at the minimiser x_k: by the envelope theorem
        # (A^H (A x - b) = 0) dr_k = 2 Re <A x_k - b_k, dA x_k - db_k>, so
        # gA = 2 R diag(g_res) X^H and gB = -2 R diag(g_res) with R = A X - B.
        Rg = (A.matmul(X) - B) * g_res.unsqueeze(-2)
        gA_res, gB_res = 2 * Rg.matmul(X.mH), -2 * Rg
        gA = gA_res if gA is None else gA + gA_res
        gB = gB_res if gB is None else gB + gB_res
    if gA is None:
        return None
    if vector:
        gB = gB.squeeze(-1)
    return (gA if ctx.needs(0) else None), (gB if ctx.needs(1) else None)


def _lstsq_solution_grad(A, B, X, g):
    solve = _fn("linalg_solve")
    m, n = A.shape[-2:]
    if m >= n:
        # X = (A^H A)^{-1} A^H B: through the normal equations (full column rank)
        Y = solve(A.mH.matmul(A), g)
        gM = -Y.matmul(X.mH)
        gA = A.matmul(gM + gM.mH) + B.matmul(Y.mH)
        gB = A.matmul(Y)
    else:
        # the minimum-norm solution X = A^H (A A^H)^{-1} B
        N = A.matmul(A.mH)
        Z = solve(N, B)
        W = solve(N, A.matmul(g))
        gN = -W.matmul(Z.mH)
        gA = Z.matmul(g.mH) + (gN + gN.mH).matmul(A)
        gB = W
    return gA, gB


# -- factorisations ---------------------------------------------------------------------------

def _cholesky_backward(L: Any, gL: Any) -> Any:
    st = _fn("linalg_solve_triangular")
    n = L.shape[-1]
    P = L.mH.matmul(gL.tril())
    P = P.tril() - 0.5 * P * _eye(n, P)  # Phi: the lower triangle with half the diagonal
    # S = L^{-H} P L^{-1}
    S = st(L.mH, st(L, P, upper=False, left=False), upper=True)
    return 0.5 * (S + S.mH)


def _cholesky(ctx, g):
    (_, upper) = ctx.args
    L = ctx.result
    if upper:
        L, g = L.mH, g.mH
    return _cholesky_backward(L, g)


def _cholesky_ex(ctx, grads):
    (_, upper, _) = ctx.args
    g = grads[0]
    if g is None:
        return None
    L = ctx.result[0]
    if upper:
        L, g = L.mH, g.mH
    return _cholesky_backward(L, g)


def _copyltu(M: Any) -> Any:
    """The Hermitian matrix with ``M``'s strict lower triangle and the real part of its diagonal.

    For complex ``A = QR`` the diagonal of ``R`` is real, so ``Q^H dQ`` (skew-Hermitian) has the
    imaginary diagonal of ``Q^H dA R^{-1}``; carried through, that leaves only ``Re diag(M)`` here.
    """
    diag = M * _eye(M.shape[-1], M)
    if M.dtype.is_complex:
        diag = diag.real.to(M.dtype)
    return M.tril(-1) + M.tril(-1).mH + diag


def _qr_tall(Q: Any, R: Any, gQ: Any, gR: Any) -> Any:
    """The gradient of ``A = Q R`` with ``Q`` (m, n), ``R`` (n, n) upper triangular, m >= n."""
    M = R.matmul(gR.mH) - gQ.mH.matmul(Q)
    b = gQ + Q.matmul(_copyltu(M))
    return _fn("linalg_solve_triangular")(R.mH, b, upper=False, left=False)  # b R^{-H}


def _qr(ctx, grads):
    import flambeau

    A, mode = ctx.args
    gQ, gR = grads
    Q, R = ctx.result
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    m, n = A.shape[-2:]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    gQ = flambeau.zeros_like(Q) if gQ is None else gQ
    gR = flambeau.zeros_like(R) if gR is None else gR
    if m >= n:
        return _qr_tall(Q, R, gQ, gR)
    # A = [X | Y] with X = Q U square: Y = Q V only moves Q's gradient (Liao et al. 2019)
    U = R[..., :, :m]
    gU, gV = gR[..., :, :m], gR[..., :, m:]
    Y = A[..., :, m:]
    gX = _qr_tall(Q, U, gQ + Y.matmul(gV.mH), gU)
    gY = Q.matmul(gV)
    return flambeau.cat([gX, gY], -1)


def _eigh(ctx, grads):
    import flambeau

    gL, gV = grads
    L, V = ctx.result
    n = L.shape[-1]
    inner = flambeau.zeros_like(V) if gL is None else flambeau.diag_embed(gL.to(V.dtype))
    if gV is not None:
        eye = _eye(n, L)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)  # E_ij = L_j - L_i
        F = (1 - eye) / flambeau.where(eye.bool(), 1.0, E)
        X = V.mH.matmul(gV)
        check_phase_invariant(X, "linalg_eigh_backward")
        # only X's skew part moves orthonormal eigenvectors; it makes the gradient Hermitian, as PyTorch's
        inner = inner + F.to(V.dtype) * (0.5 * (X - X.mH))
    return V.matmul(inner).matmul(V.mH)


def _svd_phase_term(S: Any, UtgU: Any, VtgV: Any) -> Any:
    """The diagonal the complex SVD's phase freedom adds to ``U^H gA V``.

    ``(U^H dA V)_ii = ds_i + s_i (Omega_U - Omega_V)_ii`` with ``Omega = U^H dU``, ``V^H dV``
    skew-Hermitian, so ``Im (U^H dA V)_ii / s_i`` moves the phase of ``u_i`` against ``v_i``. A loss
    that is invariant to a joint phase has ``a = Im diag(U^H gU) = -Im diag(V^H gV)``, and its
    gradient gets ``i a_i / s_i`` on the diagonal. Where ``s_i`` is zero to working precision (below
    ``eps * k * max(s)``) no phase is determined and ``a_i`` is rounding noise: the term is 0 there.
    PyTorch refuses a loss without that invariance, and so does this.
    """
    import flambeau

    zero = flambeau.zeros_like(S)
    a = UtgU.diagonal(0, -2, -1).imag if UtgU is not None else zero
    b = VtgV.diagonal(0, -2, -1).imag if VtgV is not None else zero
    if UtgU is not None or VtgV is not None:
        if a.numel() and not bool(((a + b).abs() <= 1e-2 + 1e-2 * b.abs()).all()):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase "
                               "term, making it ill-defined.")
    tiny = S <= flambeau.finfo(S.dtype).eps * S.shape[-1] * S.amax(-1, keepdim=True)
    phase = flambeau.where(tiny, 0.0, 0.5 * (a - b) / flambeau.where(tiny, 1.0, S))
    return flambeau.diag_embed(phase.to(UtgU.dtype if UtgU is not None else VtgV.dtype) * 1j)


def _svd_backward(U: Any, S: Any, Vh: Any, gU: Any, gS: Any, gVh: Any) -> Any:
    import flambeau

    k = S.shape[-1]
    V = Vh.mH
    Sd = flambeau.diag_embed(S.to(U.dtype))
    inner = flambeau.zeros_like(Sd) if gS is None else flambeau.diag_embed(gS.to(U.dtype))
    if gU is None and gVh is None:
        return U.matmul(inner).matmul(Vh)
    eye = _eye(k, S)
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # s_j^2 - s_i^2
    F = ((1 - eye) / flambeau.where(eye.bool(), 1.0, E)).to(U.dtype)
    s_inv = (1 / S).to(U.dtype)
    out = None
    UtgU = U.mH.matmul(gU) if gU is not None else None
    VtgV = Vh.matmul(gVh.mH) if gVh is not None else None
    if U.dtype.is_complex:
        inner = inner + _svd_phase_term(S, UtgU, VtgV)
    if gU is not None:
        inner = inner + (F * (UtgU - UtgU.mH)).matmul(Sd)
        m = U.shape[-2]
        if m > k:
            proj = gU - U.matmul(UtgU)  # (I - U U^H) gU
            out = (proj * s_inv.unsqueeze(-2)).matmul(Vh)
    if gVh is not None:
        gV = gVh.mH
        inner = inner + Sd.matmul(F * (VtgV - VtgV.mH))
        n = V.shape[-2]
        if n > k:
            proj = gV - V.matmul(VtgV)  # (I - V V^H) gV
            term = U.matmul((proj * s_inv.unsqueeze(-2)).mH)
            out = term if out is None else out + term
    result = U.matmul(inner).matmul(Vh)
    return result if out is None else result + out


def _svd(ctx, grads):
    _, full_matrices, _ = ctx.args
    gU, gS, gVh = grads
    U, S, Vh = ctx.result
    k = S.shape[-1]
    if full_matrices:
        # only the first k singular vectors are determined by A: PyTorch narrows to them as well
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :, :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    return _svd_backward(U, S, Vh, gU, gS, gVh)


def _svdvals(ctx, g):
    (A, _) = ctx.args
    U, _, Vh = _fn("linalg_svd")(A, False)
    return (U * g.to(U.dtype).unsqueeze(-2)).matmul(Vh)


def _cross(ctx, g):
    a, b, dim = ctx.args
    cross = _fn("linalg_cross")
    # bilinear: complex operands enter conjugated (PyTorch's convention)
    ga = cross(conj(b).expand(g.shape), g, dim=dim) if ctx.needs(0) else None
    gb = cross(g, conj(a).expand(g.shape), dim=dim) if ctx.needs(1) else None
    return ga, gb


def formulas() -> dict[str, Formula]:
    return {
        "linalg_vector_norm": Formula(_vector_norm, save=("input",), result=True),
        "linalg_det": Formula(_det, save=("A",), result=True),
        "linalg_slogdet": Formula(_slogdet, save=("A",), result=True),
        "linalg_inv": Formula(_inv, result=True),
        "linalg_inv_ex": Formula(_inv_ex, result=True),
        "linalg_solve": Formula(_solve, save=("A", "B"), result=True),
        "linalg_solve_triangular": Formula(_solve_triangular, save=("A",), result=True),
        "linalg_lstsq": Formula(_lstsq, save=("A", "B"), result=True, nondiff_outputs=(3,)),  # singular_values
        "linalg_cholesky": Formula(_cholesky, result=True),
        "linalg_cholesky_ex": Formula(_cholesky_ex, result=True),
        "linalg_qr": Formula(_qr, save=("A",), result=True),
        "linalg_eigh": Formula(_eigh, result=True),
        "linalg_svd": Formula(_svd, result=True),
        "linalg_svdvals": Formula(_svdvals, save=("A",)),
        "linalg_cross": Formula(_cross, save=("input", "other"),
                                save_if={"input": ("other",), "other": ("input",)}),
    }

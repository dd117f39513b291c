"""Gradients of linalg.lu / lu_factor / lu_solve / eig / eigvals, and of det at singular matrices.

Besides gradcheck and gradgradcheck (float64 and complex128), each formula is checked against an
exact identity that needs no finite differences: rebuilding ``A`` from its factors is the
identity map (so a loss ``sum(W * rebuilt)`` has gradient ``W``), ``lu_solve`` on ``lu_factor``'s
output is ``solve``, the eigenvalue gradient of a symmetric matrix is ``V diag(w) V^T``, and
det's gradient is the cofactor matrix (written out for the singular cases).
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

LA = fb.linalg


def _data(rng, shape, complex_):
    d = rng.standard_normal(shape)
    return d + 1j * rng.standard_normal(shape) if complex_ else d


def mk(rng, *shape, complex_=False, requires_grad=True):
    dtype = fb.complex128 if complex_ else fb.float64
    return fb.tensor(_data(rng, shape, complex_), dtype=dtype).requires_grad_(requires_grad)


def well(A):
    """``A`` pushed away from singularity, so that finite differences of solves stay accurate."""
    return (A + 4 * fb.eye(A.shape[-1], dtype=A.dtype)).detach()


def check(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.fixture
def rng():
    return np.random.default_rng(20260)


SHAPES = [(3, 3), (3, 5), (5, 3), (2, 3, 3), (2, 2, 4), (2, 4, 2)]


# -- lu ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("complex_", [False, True])
def test_lu_gradcheck(rng, shape, complex_):
    A = mk(rng, *shape, complex_=complex_)
    check(lambda a: LA.lu(a)[1:], A)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("complex_", [False, True])
def test_lu_factor_gradcheck(rng, shape, complex_):
    A = mk(rng, *shape, complex_=complex_)
    LU, pivots = LA.lu_factor(A)
    k = min(shape[-2:])
    assert pivots.dtype == fb.int32 and not pivots.requires_grad
    # random matrices pivot: the permutation path is exercised
    assert (pivots != fb.arange(1, k + 1, dtype=fb.int32)).any()
    check(lambda a: LA.lu_factor(a)[0], A)


def _rebuild_from_compact(LU, pivots, m):
    """``A = P L U`` from ``lu_factor``'s output, with the row swaps undone one by one (numpy pivots)."""
    k = min(LU.shape[-2:])
    L = LU[..., :, :k].tril(-1) + fb.eye(m, k, dtype=LU.dtype)
    PLU = L.matmul(LU[..., :k, :].triu())
    rows = list(range(m))
    for i, p in enumerate(pivots.tolist()):
        rows[i], rows[p - 1] = rows[p - 1], rows[i]
    inverse = np.argsort(rows)
    return PLU[fb.tensor(inverse)]


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
@pytest.mark.parametrize("complex_", [False, True])
def test_lu_rebuild_has_identity_gradient(rng, shape, complex_):
    W = mk(rng, *shape, complex_=complex_, requires_grad=False)
    A = mk(rng, *shape, complex_=complex_)
    P, L, U = LA.lu(A)
    (gA,) = fb.autograd.grad((W * P.matmul(L).matmul(U)).real.sum(), A)
    # d Re sum(W * A) / dA in PyTorch's convention is conj(W)
    np.testing.assert_allclose(gA.numpy(), W.conj().resolve_conj().numpy(), atol=1e-10)
    LU, pivots = LA.lu_factor(A)
    np.testing.assert_allclose(_rebuild_from_compact(LU, pivots, shape[0]).detach().numpy(), A.detach().numpy(),
                               atol=1e-12)
    (gA,) = fb.autograd.grad((W * _rebuild_from_compact(LU, pivots, shape[0])).real.sum(), A)
    np.testing.assert_allclose(gA.numpy(), W.conj().resolve_conj().numpy(), atol=1e-10)


def test_lu_permutation_output_gets_no_gradient(rng):
    A = mk(rng, 3, 3)
    P, L, U = LA.lu(A)
    (gA,) = fb.autograd.grad(P.sum() + U.sum(), A)
    (gU,) = fb.autograd.grad(LA.lu(A)[2].sum(), A)
    np.testing.assert_allclose(gA.numpy(), gU.numpy())


# -- lu_solve ---------------------------------------------------------------------------------

@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_lu_solve_gradcheck(rng, left, adjoint, complex_):
    A = well(mk(rng, 3, 3, complex_=complex_, requires_grad=False))
    LU, pivots = LA.lu_factor(A)
    LU.requires_grad_()
    B = mk(rng, 3, 2, complex_=complex_) if left else mk(rng, 2, 3, complex_=complex_)
    check(lambda lu, b: LA.lu_solve(lu, pivots, b, left=left, adjoint=adjoint), LU, B)


def test_lu_solve_broadcast_batch(rng):
    A = well(mk(rng, 1, 3, 3, requires_grad=False))
    LU, pivots = LA.lu_factor(A)
    LU.requires_grad_()
    B = mk(rng, 2, 3, 2)
    check(lambda lu, b: LA.lu_solve(lu, pivots, b), LU, B)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_through_factor_matches_solve(rng, left, adjoint):
    A = mk(rng, 2, 3, 3, complex_=True)
    B = mk(rng, 2, 3, 2, complex_=True) if left else mk(rng, 2, 2, 3, complex_=True)
    W = mk(rng, *B.shape, complex_=True, requires_grad=False)
    X = LA.lu_solve(*LA.lu_factor(A), B, left=left, adjoint=adjoint)
    gA, gB = fb.autograd.grad((W * X).real.sum(), (A, B))
    Aop = A.mH if adjoint else A
    X2 = LA.solve(Aop, B, left=left)
    np.testing.assert_allclose(X.detach().numpy(), X2.detach().numpy(), atol=1e-10)
    hA, hB = fb.autograd.grad((W * X2).real.sum(), (A, B))
    np.testing.assert_allclose(gA.numpy(), hA.numpy(), atol=1e-10)
    np.testing.assert_allclose(gB.numpy(), hB.numpy(), atol=1e-10)


# -- eig and eigvals --------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True])
def test_eigvals_gradcheck(rng, complex_):
    check(LA.eigvals, mk(rng, 2, 3, 3, complex_=complex_))


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_phase_invariant_losses_gradcheck(rng, complex_):
    A = mk(rng, 3, 3, complex_=complex_)
    check(lambda a: LA.eig(a).eigenvectors.abs(), A)
    check(lambda a: LA.eig(a).eigenvalues, A)

    def rebuilt(a):
        w, V = LA.eig(a)
        return V.matmul(fb.diag_embed(w)).matmul(LA.inv(V))

    assert gradcheck(rebuilt, (A,))


def test_eig_rebuild_has_identity_gradient(rng):
    A = mk(rng, 4, 4)
    W = mk(rng, 4, 4, requires_grad=False)
    w, V = LA.eig(A)
    rebuilt = V.matmul(fb.diag_embed(w)).matmul(LA.inv(V))
    (gA,) = fb.autograd.grad((W.to(fb.complex128) * rebuilt).real.sum(), A)
    assert gA.dtype == fb.float64
    np.testing.assert_allclose(gA.numpy(), W.numpy(), atol=1e-9)


def test_eigvals_of_symmetric_matrix(rng):
    S = rng.standard_normal((4, 4))
    S = S + S.T
    A = fb.tensor(S, dtype=fb.float64, requires_grad=True)
    weights = rng.standard_normal(4)
    values = LA.eigvals(A)
    order = np.argsort(values.real.detach().numpy())
    (gA,) = fb.autograd.grad((values.real[fb.tensor(order)] * fb.tensor(weights)).sum(), A)
    _, V = np.linalg.eigh(S)  # ascending, as order sorts them
    np.testing.assert_allclose(gA.numpy(), V @ np.diag(weights) @ V.T, atol=1e-10)


PHASE_MESSAGE = ("The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
                 "The specified loss function depends on this quantity, so it is ill-defined.")


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_phase_dependent_loss_raises(rng, complex_):
    # a real matrix with a complex pair of eigenvalues: its eigenvectors carry a free phase
    A = fb.tensor([[0.0, -1.0, 0.3], [1.0, 0.2, 0.0], [0.1, 0.0, 2.0]], dtype=fb.float64)
    A = (A + mk(rng, 3, 3, complex_=True, requires_grad=False) if complex_ else A).requires_grad_()
    _, V = LA.eig(A)
    with pytest.raises(RuntimeError) as info:
        V.sum().abs().backward()
    assert str(info.value) == "linalg_eig_backward: " + PHASE_MESSAGE


def test_eigh_complex_phase_dependent_loss_raises(rng):
    M = mk(rng, 3, 3, complex_=True, requires_grad=False)
    A = (M + M.mH).requires_grad_()
    _, V = LA.eigh(A)
    with pytest.raises(RuntimeError) as info:
        V.sum().abs().backward()
    assert str(info.value) == "linalg_eigh_backward: " + PHASE_MESSAGE
    check(lambda a: LA.eigh(a + a.mH).eigenvectors.abs(), M.clone().requires_grad_())


# -- det at singular matrices -----------------------------------------------------------------

def cofactors(a: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) for j in range(n)]
                     for i in range(n)])


def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix():
    A = fb.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=fb.float64, requires_grad=True)
    LA.det(A).backward()
    # C_ij = (-1)^(i+j) M_ij, e.g. C_00 = 5*9 - 6*8 = -3, C_11 = 1*9 - 3*7 = -12
    expected = [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]]
    np.testing.assert_allclose(A.grad.numpy(), expected, atol=1e-10)

    B = fb.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]], dtype=fb.float64, requires_grad=True)
    LA.det(B).backward()
    # exactly singular (rows 0 and 1 are parallel): C_00 = 4, C_01 = C_10 = -2, C_11 = 1, the rest 0
    np.testing.assert_allclose(B.grad.numpy(), [[4.0, -2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, 0.0]], atol=1e-12)


def test_det_gradient_rank_deficient(rng):
    for rank in (2, 1):
        X = rng.standard_normal((3, rank)) @ rng.standard_normal((rank, 3))
        A = fb.tensor(X, dtype=fb.float64, requires_grad=True)
        LA.det(A).backward()
        np.testing.assert_allclose(A.grad.numpy(), cofactors(X), atol=1e-12)
    # complex: the gradient of a holomorphic det is conj(cofactors)
    Z = _data(rng, (3, 2), True) @ _data(rng, (2, 3), True)
    A = fb.tensor(Z, dtype=fb.complex128, requires_grad=True)
    (gA,) = fb.autograd.grad(LA.det(A).real, A)
    np.testing.assert_allclose(gA.numpy(), cofactors(Z).conj(), atol=1e-12)


def test_det_gradcheck_at_rank_deficient_points(rng):
    # the SVD path is smooth through the rank drop: finite differences straddle it
    X = rng.standard_normal((3, 2)) @ rng.standard_normal((2, 3))
    check(LA.det, fb.tensor(X, dtype=fb.float64, requires_grad=True))
    mixed = np.stack([X, rng.standard_normal((3, 3))])
    check(LA.det, fb.tensor(mixed, dtype=fb.float64, requires_grad=True))
    Z = _data(rng, (3, 2), True) @ _data(rng, (2, 3), True)
    check(LA.det, fb.tensor(Z, dtype=fb.complex128, requires_grad=True))


def test_det_gradient_regular_matches_inverse_formula(rng):
    X = rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    A = fb.tensor(X, dtype=fb.float64, requires_grad=True)
    LA.det(A).sum().backward()
    expected = np.linalg.det(X)[:, None, None] * np.linalg.inv(X).transpose(0, 2, 1)
    np.testing.assert_allclose(A.grad.numpy(), expected, rtol=1e-10)


def test_det_empty_matrix_gradient():
    A = fb.zeros(0, 0, dtype=fb.float64, requires_grad=True)
    LA.det(A).backward()
    assert tuple(A.grad.shape) == (0, 0)


def test_slogdet_gradient_at_singular_matrix_is_non_finite_not_an_error():
    # log|det| has an unbounded slope there; PyTorch returns infinities/NaNs rather than raising
    A = fb.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]], dtype=fb.float64, requires_grad=True)
    sign, logabs = LA.slogdet(A)
    assert float(logabs) == float("-inf")
    logabs.backward()
    assert not np.isfinite(A.grad.numpy()).all()


def test_slogdet_complex_sign_gradient(rng):
    # sign = det / |det|: its gradient is i Im(g_sign conj(sign)) A^{-H}, next to log|det|'s A^{-H}
    A = well(mk(rng, 3, 3, complex_=True, requires_grad=False)).requires_grad_()
    W = complex(0.3, -1.2)
    sign, logabs = LA.slogdet(A)
    (g,) = fb.autograd.grad((sign * W).real + 2 * logabs, A)
    a = A.detach().numpy()
    s = np.linalg.det(a) / abs(np.linalg.det(a))
    g_sign = np.conj(W)  # d Re(W sign) in PyTorch's convention
    expected = (2 + 1j * (g_sign * np.conj(s)).imag) * np.linalg.inv(a).conj().T
    np.testing.assert_allclose(g.numpy(), expected, atol=1e-10)

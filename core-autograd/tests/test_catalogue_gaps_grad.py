"""Gradients of view_as_real / view_as_complex, complex logcumsumexp, matrix_exp (the Fréchet
derivative) and lstsq's residuals; outputs PyTorch marks non-differentiable (linalg.lu's P,
lstsq's singular_values) never require grad.

Besides gradcheck/gradgradcheck, each has an identity that needs no finite differences."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

import flambeau as fb
from flambeau.autograd import Formula, gradcheck, gradgradcheck


def mk(rng, *shape, complex_=False, scale=1.0):
    d = rng.standard_normal(shape) * scale
    if complex_:
        d = d + 1j * rng.standard_normal(shape) * scale
    return fb.tensor(d, dtype=fb.complex128 if complex_ else fb.float64).requires_grad_()


# -- view_as_real / view_as_complex ----------------------------------------------------------

def test_view_as_real_gradcheck():
    rng = np.random.default_rng(0)
    z = mk(rng, 3, 4, complex_=True)
    assert gradcheck(fb.view_as_real, (z,)) and gradgradcheck(fb.view_as_real, (z,))
    assert gradcheck(lambda t: fb.view_as_real(t.t()[1:]), (z,))


def test_view_as_complex_gradcheck():
    rng = np.random.default_rng(1)
    x = mk(rng, 2, 3, 2)
    assert gradcheck(fb.view_as_complex, (x,)) and gradgradcheck(fb.view_as_complex, (x,))


def test_view_as_real_gradient_is_the_pairs_read_as_complex():
    z = fb.tensor([1 + 2j, -3j], dtype=fb.complex128, requires_grad=True)
    W = fb.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=fb.float64)
    (fb.view_as_real(z) * W).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [1 + 2j, 3 + 4j])
    assert type(fb.view_as_real(z).grad_fn).__name__ == "ViewAsRealBackward0"


def test_view_as_complex_gradient_of_a_broadcast_grad():
    x = fb.zeros(3, 2, dtype=fb.float64, requires_grad=True)
    fb.view_as_complex(x).sum().abs().backward()  # the grad reaching the view is expanded (stride 0)
    assert x.grad is not None and tuple(x.grad.shape) == (3, 2)


# -- logcumsumexp on complex input -----------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_logcumsumexp_complex_gradcheck(dim):
    rng = np.random.default_rng(2 + dim)
    z = mk(rng, 3, 4, complex_=True)
    f = lambda t: fb.logcumsumexp(t, dim)  # noqa: E731
    assert gradcheck(f, (z,)) and gradgradcheck(f, (z,))


def test_logcumsumexp_complex_gradient_matches_the_plain_formula():
    # d/dz of sum(Re(W * log(cumsum(exp(z))))): conj(exp(z_i) * sum_{j>=i} W_j / S_j)
    rng = np.random.default_rng(4)
    z = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    W = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    t = fb.tensor(z, requires_grad=True)
    (fb.logcumsumexp(t, 0) * fb.tensor(W)).real.sum().backward()
    S = np.cumsum(np.exp(z))
    expected = np.conj(np.exp(z) * np.cumsum((W / S)[::-1])[::-1])
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12)


# -- matrix_exp ------------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("scale", [0.01, 0.5, 4.0])
def test_matrix_exp_gradcheck(complex_, scale):
    rng = np.random.default_rng(int(scale * 100) + complex_)
    A = mk(rng, 2, 3, 3, complex_=complex_, scale=scale)
    assert gradcheck(fb.matrix_exp, (A,))
    if scale < 1:
        assert gradgradcheck(fb.linalg.matrix_exp, (A,))


def test_matrix_exp_node_name():
    A = fb.eye(2, dtype=fb.float64, requires_grad=True)
    assert type(fb.linalg.matrix_exp(A).grad_fn).__name__ == "LinalgMatrixExpBackward0"  # PyTorch's name


def test_matrix_exp_gradient_is_the_adjoint_frechet_derivative():
    # For a symmetric A = V diag(w) V^T, the Fréchet derivative in the eigenbasis is the Daleckii-Krein
    # formula: (V^T L(A, E) V)_ij = (V^T E V)_ij * (e^{w_i} - e^{w_j}) / (w_i - w_j) (e^{w_i} on the
    # diagonal); the gradient of sum(G * exp(A)) is L(A, G) (A symmetric: L's adjoint is itself).
    rng = np.random.default_rng(5)
    M = rng.standard_normal((4, 4))
    A = (M + M.T) / 2
    G = rng.standard_normal((4, 4))
    w, V = np.linalg.eigh(A)
    ew = np.exp(w)
    diff = w[:, None] - w[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        K = np.where(np.abs(diff) > 1e-12, (ew[:, None] - ew[None, :]) / diff, ew[:, None])
    expected = V @ ((V.T @ G @ V) * K) @ V.T
    t = fb.tensor(A, requires_grad=True)
    (t.matrix_exp() * fb.tensor(G)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_matrix_exp_gradient_large_norm_against_finite_differences_of_scipy():
    rng = np.random.default_rng(6)
    A = rng.standard_normal((3, 3)) * 6
    G = rng.standard_normal((3, 3))
    t = fb.tensor(A, requires_grad=True)
    (t.matrix_exp() * fb.tensor(G)).sum().backward()
    h = 1e-6
    fd = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            E = np.zeros((3, 3))
            E[i, j] = h
            fd[i, j] = ((sla.expm(A + E) - sla.expm(A - E)) * G).sum() / (2 * h)
    np.testing.assert_allclose(t.grad.numpy(), fd, rtol=1e-5)


# -- non-differentiable outputs --------------------------------------------------------------

def test_lu_permutation_does_not_require_grad():
    rng = np.random.default_rng(7)
    for complex_ in (False, True):
        A = mk(rng, 3, 3, complex_=complex_)
        P, L, U = fb.linalg.lu(A)
        assert not P.requires_grad and P.grad_fn is None
        assert L.requires_grad and U.requires_grad and L.grad_fn is U.grad_fn
        (L.sum() + U.sum()).abs().backward()
        assert A.grad is not None
    with pytest.raises(RuntimeError, match="does not require grad"):
        fb.linalg.lu(mk(rng, 2, 2)).P.sum().backward()


def test_lu_factor_pivots_and_slogdet_sign():
    rng = np.random.default_rng(8)
    A = mk(rng, 3, 3)
    assert not fb.linalg.lu_factor(A).pivots.requires_grad
    assert fb.linalg.slogdet(A).sign.requires_grad  # PyTorch keeps the real sign differentiable (zero grad)


def test_lstsq_singular_values_do_not_require_grad():
    rng = np.random.default_rng(9)
    A, B = mk(rng, 5, 3), mk(rng, 5, 2)
    out = fb.linalg.lstsq(A, B, driver="gelsd")
    assert out.solution.requires_grad and out.residuals.requires_grad
    assert not out.rank.requires_grad and not out.singular_values.requires_grad


def test_formula_nondiff_outputs_option():
    f = Formula(lambda ctx, g: g, nondiff_outputs=(0, 2))
    assert f.nondiff_outputs == frozenset({0, 2})


# -- lstsq residuals -------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True])
def test_lstsq_residuals_gradcheck(complex_):
    rng = np.random.default_rng(10 + complex_)
    A, B = mk(rng, 2, 5, 3, complex_=complex_), mk(rng, 2, 5, 2, complex_=complex_)
    f = lambda a, b: fb.linalg.lstsq(a, b, driver="gelsd")[:2]  # noqa: E731
    assert gradcheck(f, (A, B)) and gradgradcheck(f, (A, B))
    a, b = mk(rng, 5, 3, complex_=complex_), mk(rng, 5, complex_=complex_)
    assert gradcheck(lambda a, b: fb.linalg.lstsq(a, b, driver="gelsd").residuals, (a, b))


def test_lstsq_residuals_gradient_envelope():
    # r = ||A x - b||^2 at the minimiser: dr/db = -2 (A x - b), dr/dA = 2 (A x - b) x^T
    rng = np.random.default_rng(12)
    A, b = rng.standard_normal((6, 2)), rng.standard_normal((6, 1))
    tA, tb = fb.tensor(A, requires_grad=True), fb.tensor(b, requires_grad=True)
    fb.linalg.lstsq(tA, tb, driver="gelsd").residuals.sum().backward()
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    R = A @ x - b
    np.testing.assert_allclose(tb.grad.numpy(), -2 * R, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tA.grad.numpy(), 2 * R @ x.T, rtol=1e-10, atol=1e-12)
    assert math.isfinite(float(tA.grad.sum()))


# -- in-place writes through views that read the storage as another dtype ---------------------
# Each in-place history is compared with the same computation written out of place.

_Z = np.array([1 + 2j, -0.5 + 1j, 3 - 1j])
_X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
_W2 = fb.tensor([2.0, 3.0], dtype=fb.float64)


def _grads(fn, *arrays):
    leaves = [fb.tensor(a, requires_grad=True) for a in arrays]
    fn(*leaves).backward()
    return [t.grad.numpy() for t in leaves]


@pytest.mark.parametrize("data, inplace, outofplace", [
    # scaling the (re, im) pairs through view_as_real
    (_Z, lambda z: _mul_view(z * 1, lambda w: fb.view_as_real(w), _W2).abs().sum(),
     lambda z: fb.view_as_complex(fb.view_as_real(z) * _W2).abs().sum()),
    # .real written in place
    (_Z, lambda z: _mul_view(z * 1, lambda w: w.real, 2.0).mul(1).pow(2).abs().sum(),
     lambda z: fb.complex(z.real * 2, z.imag).pow(2).abs().sum()),
    # a complex view of a real tensor, multiplied by i in place
    (_X, lambda x: _mul_view_of_real(x), lambda x: fb.view_as_real(fb.view_as_complex(x) * 1j).pow(2).sum()),
])
def test_inplace_through_dtype_changing_views(data, inplace, outofplace):
    got = _grads(inplace, data)[0]
    want = _grads(outofplace, data)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _mul_view(w, view, factor):
    view(w).mul_(factor)
    return w


def _mul_view_of_real(x):
    y = x * 1
    fb.view_as_complex(y).mul_(1j)
    return y.pow(2).sum()


def test_view_taken_before_an_inplace_write_gets_the_new_history():
    # r = view_as_real(w) sees w's later in-place write: its gradient flows through it
    z = fb.tensor(_Z, requires_grad=True)
    w = z * 1
    r = fb.view_as_real(w)
    w.mul_(2j)
    (r * fb.tensor([[1.0, 2.0]] * 3, dtype=fb.float64)).sum().backward()
    # r = view_as_real(2j z), loss Re(2j z) + 2 Im(2j z) = -2 Im z + 4 Re z: gradient 4 - 2j for every z
    np.testing.assert_allclose(z.grad.numpy(), [4 - 2j] * 3, rtol=1e-12)


def test_inplace_on_imag_with_a_grad_requiring_operand():
    z = fb.tensor(_Z, requires_grad=True)
    s = fb.tensor([1.0, 2.0, 3.0], dtype=fb.float64, requires_grad=True)
    w = z * 1
    w.imag.add_(s * s)
    w.abs().sum().backward()
    z2 = fb.tensor(_Z, requires_grad=True)
    s2 = fb.tensor([1.0, 2.0, 3.0], dtype=fb.float64, requires_grad=True)
    fb.complex(z2.real, z2.imag + s2 * s2).abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), z2.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(s.grad.numpy(), s2.grad.numpy(), rtol=1e-12)

"""gradcheck and gradgradcheck (float64) for flambeau.linalg and flambeau.fft, on well-conditioned,
non-contiguous and batch-broadcast inputs. Hermitian/positive-definite inputs are built inside
the checked function (``A + A^T``, ``A A^T + cI``) so that every entry's perturbation is valid.

Complex FFT outputs are checked to second order through both their real and imaginary parts
(and as complex outputs: gradcheck splits them)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

from conftest import make

LA = fb.linalg


def check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


def well(A):
    """``A`` pushed away from singularity (A has entries in [-1, 1])."""
    return A + 4 * fb.eye(A.shape[-1], dtype=A.dtype)


def spd(A):
    return A.matmul(A.mT) + A.shape[-1] * fb.eye(A.shape[-1], dtype=A.dtype)


def test_det_slogdet_inv(rng):
    A = make(rng, 2, 3, 3, noncontig=True)
    check(lambda a: LA.det(well(a)), A)
    check(lambda a: LA.slogdet(well(a)).logabsdet, A)
    check(lambda a: LA.inv(well(a)), A)
    check(lambda a: LA.inv_ex(well(a)).inverse, A)
    check(lambda a: fb.logdet(well(a)), A)


@pytest.mark.parametrize("left", [True, False])
def test_solve_broadcast(rng, left):
    A = make(rng, 2, 1, 3, 3, noncontig=True)
    B = make(rng, 4, 3, 2) if left else make(rng, 4, 2, 3)
    check(lambda a, b: LA.solve(well(a), b, left=left), A, B)


def test_solve_vector_rhs(rng):
    check(lambda a, b: LA.solve(well(a), b), make(rng, 3, 3), make(rng, 3))
    check(lambda a, b: LA.solve(well(a), b), make(rng, 2, 3, 3), make(rng, 2, 3))


@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, False, False), (False, True, True)])
def test_solve_triangular(rng, upper, left, unit):
    A = make(rng, 3, 3, noncontig=True)
    B = make(rng, 2, 3, 2) if left else make(rng, 2, 2, 3)
    check(lambda a, b: LA.solve_triangular(well(a), b, upper=upper, left=left, unitriangular=unit), A, B)


@pytest.mark.parametrize("shape_a,shape_b", [((5, 3), (5, 2)), ((2, 4), (2, 3)), ((5, 3), (5,))])
def test_lstsq(rng, shape_a, shape_b):
    check(lambda a, b: LA.lstsq(a, b).solution, make(rng, *shape_a), make(rng, *shape_b))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(rng, upper):
    A = make(rng, 2, 3, 3, noncontig=True)
    check(lambda a: LA.cholesky(spd(a), upper=upper), A)
    check(lambda a: LA.cholesky_ex(spd(a), upper=upper).L, A)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4), (2, 4, 3)])
def test_qr(rng, shape):
    check(lambda a: tuple(LA.qr(a)), make(rng, *shape, noncontig=True))


def test_qr_mode_r_is_not_differentiable(rng):
    A = make(rng, 3, 3)
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(A, mode="r").R.sum().backward()


def test_eigh_eigvalsh(rng):
    A = make(rng, 2, 3, 3, noncontig=True)
    check(lambda a: tuple(LA.eigh(a + a.mT)), A)
    check(lambda a: LA.eigvalsh(a + a.mT, "U"), A)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svd_svdvals(rng, shape):
    A = make(rng, *shape, noncontig=True)
    check(LA.svdvals, A)
    # U and Vh are determined up to signs: check sign-free functions of them
    check(lambda a: (lambda r: (r.U.matmul(fb.diag_embed(r.S)).abs(), r.S, r.Vh.abs()))(LA.svd(a, False)), A)
    check(lambda a: (lambda r: (r.U[..., :min(shape[-2:])].abs(), r.S))(LA.svd(a, True)), A)


def test_pinv_matrix_power_multi_dot(rng):
    check(LA.pinv, make(rng, 4, 3, noncontig=True))
    A = make(rng, 3, 3, noncontig=True)
    check(lambda a: LA.matrix_power(a, 3), A)
    check(lambda a: LA.matrix_power(well(a), -2), A)
    check(lambda a: a.matrix_power(0) * a, A)
    check(lambda a, b, c: LA.multi_dot([a, b, c]), make(rng, 2, 3), make(rng, 3, 4, noncontig=True), make(rng, 4))


def test_cross_broadcast(rng):
    check(lambda a, b: LA.cross(a, b), make(rng, 4, 3, noncontig=True), make(rng, 1, 3))
    check(lambda a, b: LA.cross(a, b, dim=0), make(rng, 3, 2), make(rng, 3, 1))


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf])
def test_vector_norm(rng, ord):
    x = make(rng, 3, 4, noncontig=True, low=0.2, high=1.0) * fb.tensor([1.0, -1.0, 1.0, -1.0], dtype=fb.float64)
    x = x.detach().requires_grad_()
    check(lambda t: LA.vector_norm(t, ord, dim=1), x)
    check(lambda t: LA.vector_norm(t, ord, dim=(0, 1), keepdim=True), x)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf])
def test_matrix_norm(rng, ord):
    check(lambda t: LA.matrix_norm(t, ord), make(rng, 2, 3, 4, noncontig=True))


def test_norm_vecdot(rng):
    check(LA.norm, make(rng, 3, 4))
    check(lambda x, y: LA.vecdot(x, y), make(rng, 3, 4, noncontig=True), make(rng, 4))


def test_vector_norm_of_zero_has_zero_gradient():
    x = fb.zeros(3, dtype=fb.float64, requires_grad=True)
    LA.vector_norm(x).backward()
    assert np.array_equal(x.grad.numpy(), np.zeros(3))


# -- fft ---------------------------------------------------------------------------------

def _c(a, b):
    return fb.complex(a, b)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 3, 8])
def test_fft_ifft(rng, norm, n):
    x = make(rng, 2, 5, noncontig=True)
    a, b = make(rng, 5, 2), make(rng, 5, 2)
    check(lambda t: (fb.fft.fft(t, n, norm=norm).real, fb.fft.fft(t, n, norm=norm).imag), x)
    check(lambda t: fb.fft.fft(t, n, norm=norm), x)
    check(lambda p, q: fb.fft.ifft(_c(p, q), n, 0, norm=norm).imag, a, b)
    check(lambda t: fb.fft.fft(t, n, norm=norm).real, x)
    check(lambda p, q: fb.fft.fft(_c(p, q), n, 0, norm=norm).real, a, b)
    check(lambda p, q: fb.fft.ifft(_c(p, q), n, 0, norm=norm).real, a, b)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 3, 8])
def test_rfft_irfft_hfft(rng, norm, n):
    x = make(rng, 2, 5, noncontig=True)
    check(lambda t: fb.fft.rfft(t, n, norm=norm).real, x)
    check(lambda t: fb.fft.rfft(t, n, norm=norm).imag, x)
    a, b = make(rng, 2, 4), make(rng, 2, 4)
    check(lambda p, q: fb.fft.irfft(_c(p, q), n, norm=norm), a, b)
    check(lambda p, q: fb.fft.hfft(_c(p, q), n, norm=norm), a, b)
    check(lambda t: fb.fft.ihfft(t, n, norm=norm), x)


@pytest.mark.parametrize("s", [None, (3, 6)])
def test_fftn_family(rng, s):
    a, b = make(rng, 4, 5, noncontig=True), make(rng, 4, 5)
    check(lambda p, q: fb.fft.fftn(_c(p, q), s).real, a, b)
    check(lambda p, q: fb.fft.fftn(_c(p, q), s), a, b)  # complex output: real and imaginary parts
    check(lambda p, q: fb.fft.ifftn(_c(p, q), s).real, a, b)
    check(lambda t: fb.fft.rfftn(t, s).real, a)
    check(lambda t: fb.fft.fft2(t, s, norm="ortho").real, make(rng, 2, 4, 5))
    c, d = make(rng, 4, 3), make(rng, 4, 3)
    check(lambda p, q: fb.fft.irfftn(_c(p, q), s), c, d)
    check(lambda p, q: fb.fft.irfft2(_c(p, q), s, norm="forward"), c, d)
    check(lambda t: fb.fft.fftshift(t, (0, 1)), a)

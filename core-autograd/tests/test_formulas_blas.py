"""gradcheck and gradgradcheck (float64) of the BLAS and "other" headings: the scaled products'
formulas, and the composites (einsum, tensordot, kron, cross, cdist, ...) through the ops they use;
non-contiguous and broadcast inputs."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

from conftest import make


def check(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 3)])
def test_addmm_broadcast_input(rng, beta, alpha):
    check(lambda i, a, b: fb.addmm(i, a, b, beta=beta, alpha=alpha),
          make(rng, 4), make(rng, 3, 2, noncontig=True), make(rng, 2, 4))


def test_addmm_inplace(rng):
    a, b = make(rng, 3, 2), make(rng, 2, 4, noncontig=True)

    def fn(i, x, y):
        return (i * 1).addmm_(x, y, beta=0.5, alpha=2)
    check(fn, make(rng, 3, 4), a, b)


def test_addmv(rng):
    check(lambda i, m, v: fb.addmv(i, m, v, beta=2, alpha=0.5), make(rng, 1), make(rng, 3, 4, noncontig=True),
          make(rng, 4))


def test_addr(rng):
    check(lambda i, a, b: fb.addr(i, a, b, beta=0.5, alpha=3), make(rng, 3, 1), make(rng, 3), make(rng, 4))


def test_addr_integer_vector_gets_no_grad(rng):
    i = make(rng, 2, 3)
    v1 = fb.tensor([1, 2])
    v2 = make(rng, 3)
    fb.addr(i, v1, v2).sum().backward()
    assert np.allclose(v2.grad.numpy(), np.full(3, 3.0))
    assert np.allclose(i.grad.numpy(), np.ones((2, 3)))


def test_addbmm(rng):
    check(lambda i, a, b: fb.addbmm(i, a, b, beta=0.5, alpha=2), make(rng, 3, 2), make(rng, 2, 3, 4),
          make(rng, 2, 4, 2))


def test_baddbmm(rng):
    a = make(rng, 2, 4, 3).transpose(1, 2).detach().requires_grad_()
    check(lambda i, x, y: fb.baddbmm(i, x, y, beta=-1, alpha=0.5), make(rng, 3, 1), a, make(rng, 2, 4, 2))


def test_vdot_real_and_complex(rng):
    check(fb.vdot, make(rng, 5), make(rng, 5))
    a = fb.tensor(rng.normal(size=3) + 1j * rng.normal(size=3)).requires_grad_()
    b = fb.tensor(rng.normal(size=3) + 1j * rng.normal(size=3))
    fb.vdot(a, b).real.backward()
    # d Re(sum(conj(a) b)) / d a in PyTorch's convention: conj of the Wirtinger part, i.e. b itself
    assert np.allclose(a.grad.numpy(), b.numpy())


def test_outer_inner(rng):
    check(fb.outer, make(rng, 3), make(rng, 4))
    check(fb.inner, make(rng, 2, 3, noncontig=True), make(rng, 4, 3))


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
])
def test_einsum(rng, equation, shapes):
    check(lambda *ops: fb.einsum(equation, *ops), *[make(rng, *s) for s in shapes])


def test_tensordot_kron_trace(rng):
    check(lambda a, b: fb.tensordot(a, b, dims=([0], [1])), make(rng, 3, 2, noncontig=True), make(rng, 2, 3))
    check(fb.kron, make(rng, 2, 2), make(rng, 3))
    check(fb.trace, make(rng, 3, 4, noncontig=True))


def test_cross_cdist(rng):
    check(lambda a, b: fb.cross(a, b, dim=1), make(rng, 2, 3), make(rng, 1, 3))
    x1, x2 = make(rng, 3, 2), make(rng, 4, 2)
    check(lambda a, b: fb.cdist(a, b), x1, x2)
    check(lambda a, b: fb.cdist(a, b, p=1.5), x1, x2)
    check(lambda a, b: fb.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), x1, x2)


def test_block_diag_cartesian_combinations_vander(rng):
    check(lambda a, b: fb.block_diag(a, b), make(rng, 2, 2), make(rng, 3))
    check(lambda a, b: fb.cartesian_prod(a, b), make(rng, 2), make(rng, 3))
    check(lambda a: fb.combinations(a, 2), make(rng, 4))
    check(lambda a: fb.vander(a, 4), make(rng, 3))


def test_renorm_diff(rng):
    x = make(rng, 3, 4, noncontig=True, low=0.5, high=2.0)
    check(lambda t: fb.renorm(t, 2, 0, 1.0), x)
    check(lambda t, p: fb.diff(t, 2, 1, prepend=p), x, make(rng, 3, 1))


def test_cov_corrcoef(rng):
    x = make(rng, 3, 5)
    w = fb.tensor([0.5, 1.0, 2.0, 1.0, 0.3], dtype=fb.float64)
    check(lambda t: fb.cov(t, correction=0, fweights=fb.tensor([1, 2, 1, 1, 3]), aweights=w), x)
    check(fb.corrcoef, x)


def test_cdist_zero_distances_get_zero_gradient_in_both_modes(rng):
    x = make(rng, 4, 2)
    grads = []
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        x.grad = None
        fb.cdist(x, x, compute_mode=mode).sum().backward()
        grads.append(x.grad.numpy().copy())
    assert np.all(np.isfinite(grads[0]))
    assert np.allclose(grads[0], grads[1])


def _numeric_complex_grad(loss, inputs, k, eps=1e-6):
    """PyTorch's convention for a real loss of complex inputs: dL/dRe + i dL/dIm, by central differences."""
    base = [x.detach().numpy().copy() for x in inputs]
    grad = np.zeros_like(base[k])
    for idx in np.ndindex(base[k].shape):
        parts = []
        for step in (eps, 1j * eps):
            values = []
            for sign in (1, -1):
                moved = [b.copy() for b in base]
                moved[k][idx] += sign * step
                values.append(loss(*[fb.tensor(m) for m in moved]).item())
            parts.append((values[0] - values[1]) / (2 * eps))
        grad[idx] = parts[0] + 1j * parts[1]
    return grad


@pytest.mark.parametrize("op,shapes", [
    (fb.addmm, [(2, 4), (2, 3), (3, 4)]),
    (fb.addmv, [(2,), (2, 3), (3,)]),
    (fb.addr, [(2, 3), (2,), (3,)]),
    (fb.baddbmm, [(2, 2, 3), (2, 2, 4), (2, 4, 3)]),
    (fb.addbmm, [(2, 3), (2, 2, 4), (2, 4, 3)]),
])
def test_complex_gradients_follow_pytorchs_conjugate_convention(rng, op, shapes):
    inputs = [fb.tensor(rng.normal(size=s) + 1j * rng.normal(size=s)).requires_grad_() for s in shapes]

    def loss(*xs):
        r = op(*xs, beta=0.5 + 1j, alpha=2 - 1j)
        return (r.real * r.real).sum() + (r.imag * 3).sum()

    loss(*inputs).backward()
    for k, x in enumerate(inputs):
        assert np.allclose(x.grad.numpy(), _numeric_complex_grad(loss, inputs, k), atol=1e-5)

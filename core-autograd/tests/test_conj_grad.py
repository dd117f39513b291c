"""Gradients through conjugated views (``Tensor.conj()``, ``mH``, ``resolve_conj``), complex128
gradcheck and gradgradcheck; and the gradient of a view of a conjugated view.

The reference for the values is PyTorch's convention (the gradient of a real ``L`` with respect to
``z`` is ``dL/dRe z + i dL/dIm z``): for ``L = Re(sum(w * conj(z)))`` it is ``conj(w)``... written
out in the first test.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def cmake(rng, *shape):
    data = rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)
    return fb.tensor(data, dtype=fb.complex128).requires_grad_()


def test_gradient_of_a_conjugated_view_by_hand(rng):
    z = cmake(rng, 3)
    w = rng.uniform(-1, 1, 3) + 1j * rng.uniform(-1, 1, 3)
    # L = Re(sum(w * conj(z))) = sum(Re w Re z + Im w Im z): dL/dRe z = Re w, dL/dIm z = Im w
    loss = (fb.tensor(w) * z.conj()).sum().real
    loss.backward()
    np.testing.assert_allclose(z.grad.numpy(), w, rtol=1e-12)
    assert not z.grad.is_conj()


@pytest.mark.parametrize("fn", [
    lambda z: z.conj(),
    lambda z: z.conj() * z,
    lambda z: z.conj().exp(),
    lambda z: z.conj().t() @ z,
    lambda z: z.mH,
    lambda z: z.conj()[1:, ::2],
    lambda z: z.conj().transpose(0, 1).reshape(-1),
    lambda z: z.conj().resolve_conj(),
    lambda z: z.conj().sum(0),
    lambda z: fb.linalg.inv(z.conj() + 3 * fb.eye(3, dtype=fb.complex128)),
    lambda z: z.conj().abs(),
    lambda z: z.conj().real,
    lambda z: z.conj().imag,
])
def test_gradcheck_through_conjugated_views(rng, fn):
    z = cmake(rng, 3, 3)
    assert gradcheck(fn, (z,))
    assert gradgradcheck(fn, (z,))


def test_conj_of_a_real_tensor_keeps_its_gradient():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64, requires_grad=True)
    assert x.conj() is x
    (x.conj() * 3).sum().backward()
    assert np.array_equal(x.grad.numpy(), [3.0, 3.0])


def test_in_place_through_a_conjugated_view_by_hand():
    """``y.conj().mul_(w)`` leaves ``y * conj(w)`` in ``y``; for ``L = |sum(y * c)|`` and
    ``s = sum(x * a)``, ``a = conj(w) * c``, the gradient is ``conj(a) * s / |s|``."""
    z = np.array([1 + 2j, 3 - 1j])
    w, c = np.array([2 + 1j, 1j]), np.array([1 + 1j, 2 - 1j])
    x = fb.tensor(z, requires_grad=True)
    y = x * 1
    y.conj().mul_(fb.tensor(w))
    (y * fb.tensor(c)).sum().abs().backward()
    a = np.conj(w) * c
    s = np.sum(z * a)
    np.testing.assert_allclose(x.grad.numpy(), np.conj(a) * s / abs(s), rtol=1e-12)

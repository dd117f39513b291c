"""nn.utils.parametrizations.orthogonal with orthogonal_map="householder" (PyTorch's default for
non-square real matrices): the weight is a product of Householder reflectors, orthogonal whatever
the reflectors' vectors, differentiable, and assignable through right_inverse."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn as nn
from flambeau.autograd import gradcheck
from flambeau.nn.utils import parametrizations
from flambeau.nn.utils.parametrizations import _householder_product, _householder_qr_reflectors

RNG = np.random.default_rng(0)


def ref_householder_product(a, tau):
    n, k = a.shape
    q = np.eye(n)
    for i in range(k):
        v = np.zeros(n)
        v[i] = 1.0
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(n) - tau[i] * np.outer(v, v))
    return q[:, :k]


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (5, 1)])
def test_householder_product_matches_numpy_and_gradcheck(shape):
    a, tau = RNG.standard_normal(shape), RNG.standard_normal(shape[1])
    got = _householder_product(fb.tensor(a), fb.tensor(tau))
    np.testing.assert_allclose(got.numpy(), ref_householder_product(a, tau), rtol=1e-12, atol=1e-12)
    A = fb.tensor(a, requires_grad=True)
    T = fb.tensor(tau, requires_grad=True)
    assert gradcheck(_householder_product, [A, T])


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_householder(shape, use_trivialization):
    class Batched(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(fb.randn(shape, dtype=fb.float64))

    m = Batched() if len(shape) == 3 else nn.Linear(shape[1], shape[0]).double()
    parametrizations.orthogonal(m, orthogonal_map="householder", use_trivialization=use_trivialization)
    assert hasattr(m.parametrizations.weight[0], "base") == use_trivialization or not use_trivialization

    def check():
        w = m.weight.detach().numpy()
        gram = np.swapaxes(w, -1, -2) @ w if shape[-2] >= shape[-1] else w @ np.swapaxes(w, -1, -2)
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), atol=1e-10)

    check()
    with fb.no_grad():  # any reflector vectors (the diagonal keeps its signs): still orthogonal
        orig = m.parametrizations.weight.original
        noise = fb.tensor(RNG.standard_normal(shape))
        keep = orig.diagonal(dim1=-2, dim2=-1).clone()
        orig.add_(noise)
        orig.diagonal(dim1=-2, dim2=-1).copy_(keep)
    check()
    m.weight.sum().backward()
    assert m.parametrizations.weight.original.grad.shape == shape
    big = max(shape[-2:])
    q = np.linalg.qr(RNG.standard_normal(shape[:-2] + (big, big)))[0][..., :shape[-2], :shape[-1]]
    m.weight = fb.tensor(q)  # assignment through right_inverse: the weight becomes q
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-10)


def test_householder_is_the_default_for_non_square_real():
    m = parametrizations.orthogonal(nn.Linear(3, 5))
    assert m.parametrizations.weight[0].orthogonal_map == "householder"
    m = parametrizations.orthogonal(nn.Linear(3, 3))
    assert m.parametrizations.weight[0].orthogonal_map == "matrix_exp"


def test_qr_reflectors_round_trip():
    q = np.linalg.qr(RNG.standard_normal((5, 5)))[0][:, :3]
    a = _householder_qr_reflectors(fb.tensor(q))
    tau = 2.0 / (1.0 + (np.tril(a.numpy(), -1) ** 2).sum(0))
    back = _householder_product(fb.tensor(np.tril(a.numpy(), -1)), fb.tensor(tau)).numpy()
    back = back * np.diagonal(a.numpy()).astype(np.int32)[None, :]
    np.testing.assert_allclose(back, q, atol=1e-12)

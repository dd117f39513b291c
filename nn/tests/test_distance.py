"""Distances: cosine_similarity, pairwise_distance, pdist against numpy references."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck

RNG = np.random.default_rng(2)


def t(a, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=fb.float64)
    return x.requires_grad_() if requires_grad else x


def test_cosine_similarity_broadcasts():
    a, b = RNG.standard_normal((4, 1, 5)), RNG.standard_normal((3, 5))
    got = F.cosine_similarity(t(a), t(b), dim=-1)
    a2, b2 = np.broadcast_arrays(a, b)
    expected = (a2 * b2).sum(-1) / (np.linalg.norm(a2, axis=-1) * np.linalg.norm(b2, axis=-1))
    assert tuple(got.shape) == (4, 3)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    # a zero vector: its norm is clamped to eps, the similarity is 0
    assert F.cosine_similarity(t(np.zeros((1, 3))), t(np.ones((1, 3)))).item() == 0.0
    assert gradcheck(lambda x, y: F.cosine_similarity(x, y), (t(RNG.standard_normal((3, 4)), True),
                                                             t(RNG.standard_normal((3, 4)), True)))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, keepdim):
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    got = F.pairwise_distance(t(a), t(b), p=p, keepdim=keepdim)
    expected = (np.abs(a - b + 1e-6) ** p).sum(-1, keepdims=keepdim) ** (1 / p)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y, p=p), (t(a, True), t(b, True)))


@pytest.mark.parametrize("p", [1.0, 2.0, 0.5])
def test_pdist(p):
    x = RNG.standard_normal((5, 3))
    got = F.pdist(t(x), p)
    expected = [(np.abs(x[i] - x[j]) ** p).sum() ** (1 / p) for i in range(5) for j in range(i + 1, 5)]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x: F.pdist(x, p), (t(x, True),))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(t(np.ones(3)))


def test_distance_modules():
    from flambeau import nn

    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(nn.CosineSimilarity(dim=1)(t(a), t(b)).numpy(),
                               F.cosine_similarity(t(a), t(b)).numpy())
    np.testing.assert_allclose(nn.PairwiseDistance(p=1.0, keepdim=True)(t(a), t(b)).numpy(),
                               np.abs(a - b + 1e-6).sum(-1, keepdims=True), rtol=1e-12)

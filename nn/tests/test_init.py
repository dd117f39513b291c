"""flambeau.nn.init: gains, fans, and the distributions (statistical checks with fixed seeds)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import flambeau as fb
from flambeau.nn import init


def _gen(seed=0):
    return fb.Generator().manual_seed(seed)


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(fb.empty(3, 5)) == (5, 3)
    assert init._calculate_fan_in_and_fan_out(fb.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(fb.empty(3))


def _ks(sample, cdf):
    return stats.kstest(np.asarray(sample).ravel(), cdf).pvalue


def test_uniform_and_normal_distributions():
    t = fb.empty(200, 100)
    init.uniform_(t, -2.0, 3.0, generator=_gen(1))
    assert _ks(t.numpy(), stats.uniform(-2, 5).cdf) > 1e-3
    init.normal_(t, 1.0, 0.5, generator=_gen(2))
    assert _ks(t.numpy(), stats.norm(1.0, 0.5).cdf) > 1e-3


def test_generator_makes_it_reproducible():
    a, b = fb.empty(10), fb.empty(10)
    init.normal_(a, generator=_gen(7))
    init.normal_(b, generator=_gen(7))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_trunc_normal():
    t = fb.empty(20000)
    init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5, generator=_gen(3))
    v = t.numpy()
    assert v.min() >= -1.0 and v.max() <= 1.5
    ref = stats.truncnorm((-1.0 - 0.5) / 1.0, (1.5 - 0.5) / 1.0, loc=0.5, scale=1.0)
    assert _ks(v, ref.cdf) > 1e-3


def test_xavier_and_kaiming_scales():
    t = fb.empty(300, 200)
    init.xavier_uniform_(t, gain=2.0, generator=_gen(4))
    a = 2.0 * math.sqrt(6.0 / 500)
    assert _ks(t.numpy(), stats.uniform(-a, 2 * a).cdf) > 1e-3
    init.xavier_normal_(t, generator=_gen(5))
    assert _ks(t.numpy(), stats.norm(0, math.sqrt(2.0 / 500)).cdf) > 1e-3
    init.kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="relu", generator=_gen(6))
    b = math.sqrt(2) * math.sqrt(3.0 / 200)
    assert _ks(t.numpy(), stats.uniform(-b, 2 * b).cdf) > 1e-3
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu", generator=_gen(8))
    assert _ks(t.numpy(), stats.norm(0, math.sqrt(2) / math.sqrt(300)).cdf) > 1e-3
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(t, mode="fan_avg")


def test_kaiming_on_zero_element_tensor_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(fb.empty(0, 3))


def test_constant_ones_zeros_eye():
    t = fb.empty(2, 3)
    assert init.constant_(t, 2.5).tolist() == [[2.5] * 3] * 2
    assert init.ones_(t).sum().item() == 6
    assert init.zeros_(t).sum().item() == 0
    np.testing.assert_array_equal(init.eye_(t).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(fb.empty(3))


def test_dirac():
    w = fb.empty(4, 2, 3)
    init.dirac_(w)
    x = np.zeros((4, 2, 3))
    x[0, 0, 1] = x[1, 1, 1] = 1
    np.testing.assert_array_equal(w.numpy(), x)
    w2 = fb.empty(4, 2, 3, 3)
    init.dirac_(w2, groups=2)
    y = np.zeros((4, 2, 3, 3))
    y[0, 0, 1, 1] = y[1, 1, 1, 1] = y[2, 0, 1, 1] = y[3, 1, 1, 1] = 1
    np.testing.assert_array_equal(w2.numpy(), y)
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(fb.empty(3, 2, 3), groups=2)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(fb.empty(3, 2))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 2)])
def test_orthogonal(shape):
    t = fb.empty(*shape, dtype=fb.float64)
    init.orthogonal_(t, gain=2.0, generator=_gen(9))
    m = t.numpy().reshape(shape[0], -1)
    gram = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-10)


def test_sparse():
    t = fb.empty(10, 6)
    init.sparse_(t, sparsity=0.3, std=0.01, generator=_gen(10))
    zeros_per_col = (t.numpy() == 0).sum(axis=0)
    assert (zeros_per_col >= 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(fb.empty(3), 0.1)


def test_no_grad_and_returns_same_tensor():
    p = fb.nn.Parameter(fb.empty(3, 4))
    out = init.xavier_uniform_(p)
    assert out is p and p.is_leaf and p.requires_grad and p.grad_fn is None


def test_meta_tensors_are_checked_not_written():
    t = fb.empty(10**6, 10**6, device="meta")
    assert init.kaiming_uniform_(t) is t
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_normal_(fb.empty(10, device="meta"))


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="nn.init.normal` is now deprecated in favor of `nn.init.normal_"):
        init.normal(fb.empty(2))

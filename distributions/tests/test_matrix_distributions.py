"""Wishart against scipy.stats.wishart, LKJCholesky against its normalisation and its marginals."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import flambeau as fb
import flambeau.distributions as D

RNG = np.random.default_rng(5)


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float64))


def _spd(n):
    m = RNG.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_against_scipy(param):
    cov = np.stack([_spd(3), _spd(3)])
    df = np.array([4.5, 7.0])
    given = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
             "scale_tril": np.linalg.cholesky(cov)}[param]
    d = D.Wishart(t(df), **{param: t(given)})
    x = np.stack([stats.wishart(df[i], cov[i]).rvs(random_state=i) for i in range(2)])
    ref = [stats.wishart(df[i], cov[i]) for i in range(2)]
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), [ref[i].logpdf(x[i]) for i in range(2)], rtol=1e-9)
    np.testing.assert_allclose(d.entropy().numpy(), [r.entropy() for r in ref], rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), np.stack([r.mean() for r in ref]), rtol=1e-9)
    np.testing.assert_allclose(d.variance.numpy(), np.stack([r.var() for r in ref]), rtol=1e-9)


def test_wishart_samples():
    cov = _spd(3)
    d = D.Wishart(t(6.0), covariance_matrix=t(cov))
    x = d.rsample((20000,)).numpy()
    assert bool(D.constraints.positive_definite.check(t(x)).all())
    ref = stats.wishart(6.0, cov)
    se = np.sqrt(ref.var() / x.shape[0])
    assert np.all(np.abs(x.mean(0) - ref.mean()) < 5 * se)
    # the (0, 0) element is scale * Chi2(df)
    assert stats.kstest(x[:, 0, 0] / cov[0, 0], stats.chi2(6.0).cdf).pvalue > 1e-3


def test_wishart_errors():
    with pytest.raises(ValueError, match="Value of df=1.5 expected to be greater than ndim - 1 = 2."):
        D.Wishart(1.5, covariance_matrix=fb.eye(3))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.Wishart(4.0)


@pytest.mark.parametrize("eta", [0.5, 1.0, 3.0])
def test_lkj_cholesky_density_of_dim_2_integrates_to_one(eta):
    d = D.LKJCholesky(2, t(eta))

    def density(r):
        L = np.array([[1.0, 0.0], [r, np.sqrt(1 - r * r)]])
        return float(np.exp(d.log_prob(t(L)).item()))

    total, _ = integrate.quad(density, -1, 1)
    assert total == pytest.approx(1.0, rel=1e-7)


@pytest.mark.parametrize("eta", [0.7, 2.0])
def test_lkj_cholesky_samples(eta):
    dim = 4
    L = D.LKJCholesky(dim, t(eta)).sample((20000,))
    assert tuple(L.shape) == (20000, dim, dim)
    assert bool(D.constraints.corr_cholesky.check(L).all())
    corr = (L @ L.mT).numpy()
    # each off-diagonal correlation r has (r + 1) / 2 ~ Beta(b, b), b = eta - 1 + dim / 2
    b = eta - 1 + dim / 2
    assert stats.kstest((corr[:, 2, 0] + 1) / 2, stats.beta(b, b).cdf).pvalue > 1e-3
    assert stats.kstest((corr[:, 3, 1] + 1) / 2, stats.beta(b, b).cdf).pvalue > 1e-3


def test_lkj_cholesky_errors():
    with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to 2. Found dim=1."):
        D.LKJCholesky(1)

"""Densities, distribution functions, moments and entropies against scipy.stats, in float64, with batched
parameters (each case broadcasts a parameter of shape (3, 1) against one of shape (4,))."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import flambeau as fb
import flambeau.distributions as D

RNG = np.random.default_rng(0)


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float64))


def col(values):
    return np.asarray(values, dtype=np.float64).reshape(-1, 1)


def row(values):
    return np.asarray(values, dtype=np.float64)


# name: (flambeau distribution, scipy frozen distribution, values to evaluate at (broadcast shape 3x4))
A = col([0.5, 1.7, 4.0])
B = row([0.3, 1.0, 2.5, 7.0])
LOC = col([-1.0, 0.0, 2.0])


def _positive_values():
    return RNG.uniform(0.05, 3.0, size=(3, 4))


def _unit_values():
    return RNG.uniform(0.02, 0.98, size=(3, 4))


def _real_values():
    return RNG.normal(0.0, 2.0, size=(3, 4))


CASES = {
    "Normal": (lambda: D.Normal(t(LOC), t(B)), stats.norm(LOC, B), _real_values),
    "Uniform": (lambda: D.Uniform(t(LOC), t(LOC + B)), stats.uniform(LOC, B + 0 * LOC),
                lambda: LOC + B * RNG.uniform(0.01, 0.99, size=(3, 4))),
    "Exponential": (lambda: D.Exponential(t(B)), stats.expon(scale=1 / B + 0 * A), _positive_values),
    "Laplace": (lambda: D.Laplace(t(LOC), t(B)), stats.laplace(LOC, B), _real_values),
    "Cauchy": (lambda: D.Cauchy(t(LOC), t(B)), stats.cauchy(LOC, B), _real_values),
    "HalfNormal": (lambda: D.HalfNormal(t(B + 0 * A)), stats.halfnorm(scale=B + 0 * A), _positive_values),
    "HalfCauchy": (lambda: D.HalfCauchy(t(B + 0 * A)), stats.halfcauchy(scale=B + 0 * A), _positive_values),
    "LogNormal": (lambda: D.LogNormal(t(LOC), t(B)), stats.lognorm(s=B, scale=np.exp(LOC)), _positive_values),
    "Gumbel": (lambda: D.Gumbel(t(LOC), t(B)), stats.gumbel_r(LOC, B), _real_values),
    "Pareto": (lambda: D.Pareto(t(A), t(B)), stats.pareto(b=B, scale=A), lambda: A + _positive_values()),
    "Weibull": (lambda: D.Weibull(t(A), t(B)), stats.weibull_min(c=B, scale=A), _positive_values),
    "Gamma": (lambda: D.Gamma(t(A), t(B)), stats.gamma(a=A, scale=1 / B), _positive_values),
    "Chi2": (lambda: D.Chi2(t(A + 0 * B)), stats.chi2(df=A + 0 * B), _positive_values),
    "Beta": (lambda: D.Beta(t(A), t(B)), stats.beta(A, B), _unit_values),
    "StudentT": (lambda: D.StudentT(t(A + 2.5), t(LOC), t(B)), stats.t(A + 2.5, LOC, B), _real_values),
    "FisherSnedecor": (lambda: D.FisherSnedecor(t(A), t(B + 4.5)), stats.f(A, B + 4.5), _positive_values),
    "InverseGamma": (lambda: D.InverseGamma(t(A + 2.5), t(B)), stats.invgamma(A + 2.5, scale=B), _positive_values),
    "Kumaraswamy": (lambda: D.Kumaraswamy(t(A), t(B)), None, _unit_values),
    "VonMises": (lambda: D.VonMises(t(LOC), t(B)), stats.vonmises(B, loc=LOC), lambda: RNG.uniform(-3, 3, (3, 4))),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(t(LOC), t(B), t(col([-0.3, 0.0, 0.4]))),
                          stats.genpareto(col([-0.3, 0.0, 0.4]), LOC, B),
                          lambda: LOC + RNG.uniform(0.01, 0.7, size=(3, 4)) * B),
}

# What each flambeau distribution does not define, as in PyTorch.
MISSING = {
    "cdf": {"StudentT", "FisherSnedecor", "Kumaraswamy", "VonMises", "Weibull", "Beta", "InverseGamma", "Chi2x"},
    "icdf": {"StudentT", "FisherSnedecor", "Kumaraswamy", "VonMises", "Weibull", "Beta", "InverseGamma", "Gamma",
             "Chi2", "LogNormal"},
    "entropy": {"VonMises", "FisherSnedecor"},
}


def _close(actual, expected, rtol=1e-9, atol=1e-11):
    actual = np.asarray(actual.numpy() if hasattr(actual, "numpy") else actual)
    actual, expected = np.broadcast_arrays(actual, np.asarray(expected, dtype=np.float64))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob(name):
    make, ref, values = CASES[name]
    d = make()
    x = values()
    lp = d.log_prob(t(x))
    assert lp.dtype == fb.float64
    assert tuple(lp.shape) == (3, 4)
    if name == "Kumaraswamy":
        a, b = A, B
        expected = np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x ** a)
    else:
        expected = ref.logpdf(x)
    _close(lp, expected, rtol=1e-8)


@pytest.mark.parametrize("name", sorted(set(CASES) - MISSING["cdf"]))
def test_cdf(name):
    make, ref, values = CASES[name]
    x = values()
    _close(make().cdf(t(x)), ref.cdf(x), rtol=1e-8)


@pytest.mark.parametrize("name", sorted(set(CASES) - MISSING["icdf"]))
def test_icdf(name):
    make, ref, _ = CASES[name]
    q = RNG.uniform(0.02, 0.98, size=(3, 4))
    _close(make().icdf(t(q)), ref.ppf(q), rtol=1e-8)


@pytest.mark.parametrize("name", sorted(set(CASES) - MISSING["entropy"]))
def test_entropy(name):
    make, ref, _ = CASES[name]
    d = make()
    if name == "Kumaraswamy":
        a, b = A, B
        expected = (1 - 1 / b) + (1 - 1 / a) * (special.digamma(b + 1) + np.euler_gamma) - np.log(a * b)
    else:
        expected = ref.entropy()
    _close(d.entropy(), expected, rtol=1e-8)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"Cauchy", "HalfCauchy", "VonMises"}))
def test_mean_and_variance(name):
    make, ref, _ = CASES[name]
    d = make()
    if name == "Kumaraswamy":
        def moment(n):
            return B * special.beta(1 + n / A, B)
        mean, var = moment(1), moment(2) - moment(1) ** 2
    else:
        mean, var = ref.mean(), ref.var()
    _close(d.mean, mean, rtol=1e-8)
    _close(d.variance, var, rtol=1e-7)
    _close(d.stddev, np.sqrt(var), rtol=1e-7)


def test_cauchy_moments_are_undefined():
    d = D.Cauchy(t(LOC), t(B))
    assert np.isnan(d.mean.numpy()).all() and np.isinf(d.variance.numpy()).all()


def test_von_mises_circular_variance():
    d = D.VonMises(t(LOC), t(B))
    _close(d.variance, 1 - special.i1e(B) / special.i0e(B) + 0 * LOC)


# -- discrete -------------------------------------------------------------------------------

P = row([0.1, 0.35, 0.6, 0.93])
N = col([1.0, 5.0, 12.0])


def test_bernoulli():
    d = D.Bernoulli(probs=t(P))
    x = np.array([0.0, 1.0, 1.0, 0.0])
    _close(d.log_prob(t(x)), stats.bernoulli(P).logpmf(x))
    _close(d.entropy(), stats.bernoulli(P).entropy())
    _close(d.mean, P)
    _close(d.variance, P * (1 - P))
    d2 = D.Bernoulli(logits=t(special.logit(P)))
    _close(d2.log_prob(t(x)), stats.bernoulli(P).logpmf(x))
    assert tuple(d.enumerate_support().shape) == (2, 4)
    assert tuple(d.enumerate_support(expand=False).shape) == (2, 1)


def test_binomial():
    d = D.Binomial(t(N), t(P))
    k = np.minimum(np.floor(N * P + 0.5), N) + 0 * P
    _close(d.log_prob(t(k)), stats.binom(N, P).logpmf(k), rtol=1e-9)
    _close(d.mean, N * P)
    _close(d.variance, N * P * (1 - P))
    d1 = D.Binomial(t(np.full(4, 7.0)), logits=t(special.logit(P)))
    _close(d1.entropy(), stats.binom(7, P).entropy(), rtol=1e-9)
    assert tuple(d1.enumerate_support().shape) == (8, 4)


def test_geometric():
    d = D.Geometric(t(P))
    k = np.array([0.0, 2.0, 5.0, 1.0])
    # scipy's geom counts trials (support 1, 2, ...): ours counts failures
    _close(d.log_prob(t(k)), stats.geom(P).logpmf(k + 1))
    _close(d.mean, stats.geom(P).mean() - 1)
    _close(d.variance, stats.geom(P).var())
    _close(d.entropy(), stats.geom(P).entropy(), rtol=1e-9)


def test_poisson():
    rate = col([0.5, 3.0, 20.0]) + 0 * P
    d = D.Poisson(t(rate))
    k = np.floor(rate * 1.3)
    _close(d.log_prob(t(k)), stats.poisson(rate).logpmf(k))
    _close(d.mean, rate)
    _close(d.variance, rate)


def test_negative_binomial():
    d = D.NegativeBinomial(t(N), t(P))
    k = np.floor(N * 0.7 + 1) + 0 * P
    # ours counts successes (probability probs) before total_count failures; scipy's nbinom counts
    # failures before n successes with success probability p: swap the roles
    _close(d.log_prob(t(k)), stats.nbinom(N, 1 - P).logpmf(k), rtol=1e-9)
    _close(d.mean, stats.nbinom(N, 1 - P).mean())
    _close(d.variance, stats.nbinom(N, 1 - P).var(), rtol=1e-9)


def test_categorical_and_one_hot():
    probs = RNG.dirichlet(np.ones(5), size=3)
    d = D.Categorical(t(probs * 3.0))  # unnormalised: normalised on construction
    k = np.array([0, 4, 2])
    _close(d.log_prob(fb.tensor(k)), np.log(probs[np.arange(3), k]))
    _close(d.entropy(), stats.entropy(probs, axis=-1))
    oh = D.OneHotCategorical(logits=t(np.log(probs) + 1.0))
    _close(oh.log_prob(t(np.eye(5)[k])), np.log(probs[np.arange(3), k]))
    _close(oh.entropy(), stats.entropy(probs, axis=-1))
    _close(oh.variance, probs * (1 - probs))
    assert tuple(oh.enumerate_support().shape) == (5, 3, 5)


def test_multinomial():
    probs = RNG.dirichlet(np.ones(4), size=2)
    counts = np.array([[3.0, 0.0, 4.0, 1.0], [0.0, 8.0, 0.0, 0.0]])
    d = D.Multinomial(8, t(probs))
    _close(d.log_prob(t(counts)), stats.multinomial(8, probs).logpmf(counts))
    _close(d.entropy(), stats.multinomial(8, probs).entropy(), rtol=1e-9)
    _close(d.mean, 8 * probs)


# -- multivariate ---------------------------------------------------------------------------

def _spd(n, batch=()):
    m = RNG.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(param):
    cov = _spd(3, (2,))
    loc = RNG.normal(size=(2, 3))
    given = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
             "scale_tril": np.linalg.cholesky(cov)}[param]
    d = D.MultivariateNormal(t(loc), **{param: t(given)})
    x = RNG.normal(size=(5, 2, 3))
    expected = np.stack([stats.multivariate_normal(loc[i], cov[i]).logpdf(x[:, i]) for i in range(2)], -1)
    _close(d.log_prob(t(x)), expected, rtol=1e-9)
    _close(d.entropy(), [stats.multivariate_normal(loc[i], cov[i]).entropy() for i in range(2)])
    _close(d.covariance_matrix, cov)
    _close(d.precision_matrix, np.linalg.inv(cov), rtol=1e-8, atol=1e-10)
    _close(d.scale_tril, np.linalg.cholesky(cov))
    _close(d.variance, np.diagonal(cov, axis1=-2, axis2=-1))


def test_lowrank_multivariate_normal():
    W = RNG.normal(size=(2, 4, 2))
    diag = RNG.uniform(0.5, 2.0, size=(2, 4))
    loc = RNG.normal(size=(2, 4))
    cov = W @ np.swapaxes(W, -1, -2) + np.stack([np.diag(v) for v in diag])
    d = D.LowRankMultivariateNormal(t(loc), t(W), t(diag))
    x = RNG.normal(size=(6, 2, 4))
    expected = np.stack([stats.multivariate_normal(loc[i], cov[i]).logpdf(x[:, i]) for i in range(2)], -1)
    _close(d.log_prob(t(x)), expected, rtol=1e-9)
    _close(d.entropy(), [stats.multivariate_normal(loc[i], cov[i]).entropy() for i in range(2)])
    _close(d.covariance_matrix, cov)
    _close(d.precision_matrix, np.linalg.inv(cov), rtol=1e-8, atol=1e-10)
    _close(d.scale_tril @ d.scale_tril.mT, cov)


def test_dirichlet():
    alpha = RNG.uniform(0.3, 4.0, size=(2, 4))
    x = RNG.dirichlet(np.ones(4), size=2)
    d = D.Dirichlet(t(alpha))
    _close(d.log_prob(t(x)), [stats.dirichlet(alpha[i]).logpdf(x[i]) for i in range(2)])
    _close(d.entropy(), [stats.dirichlet(alpha[i]).entropy() for i in range(2)])
    _close(d.mean, alpha / alpha.sum(-1, keepdims=True))
    _close(d.variance, np.stack([stats.dirichlet(alpha[i]).var() for i in range(2)]))


def test_continuous_bernoulli_against_its_density():
    p = row([0.1, 0.4995, 0.5, 0.8])
    x = np.array([0.2, 0.5, 0.9, 0.05])
    d = D.ContinuousBernoulli(t(p))
    norm = np.where(p == 0.5, 2.0, 2 * np.arctanh(1 - 2 * p) / np.where(p == 0.5, 1, 1 - 2 * p))
    _close(d.log_prob(t(x)), np.log(norm) + x * np.log(p) + (1 - x) * np.log1p(-p), rtol=1e-6, atol=1e-9)
    # mean by quadrature of the density
    grid = np.linspace(0, 1, 200001)
    dens = norm[:, None] * p[:, None] ** grid * (1 - p[:, None]) ** (1 - grid)
    _close(d.mean, np.trapezoid(grid * dens, grid, axis=-1), rtol=1e-6)
    _close(d.cdf(t(x)), [np.trapezoid(dens[i][grid <= x[i]], grid[grid <= x[i]]) for i in range(4)],
           rtol=1e-4, atol=5e-4)  # inside lims PyTorch's cdf is the uniform one (off by < 1e-3)


def test_relaxed_distributions_log_prob_integrates_to_one():
    d = D.RelaxedBernoulli(t(0.7), probs=t([0.3]))
    grid = np.linspace(1e-6, 1 - 1e-6, 400001)
    dens = np.exp(d.log_prob(t(grid.reshape(-1, 1))).numpy()[:, 0])
    assert abs(np.trapezoid(dens, grid) - 1) < 1e-3


def test_logistic_normal_matches_change_of_variables():
    loc, scale = np.array([0.2, -0.5]), np.array([0.7, 1.3])
    d = D.LogisticNormal(t(loc), t(scale))
    x = np.array([0.3, 0.5, 0.2])
    # stick-breaking inverse: y_k = logit(x_k / remaining) + log(K - k) ... its Jacobian written out
    rem = 1 - np.cumsum(np.concatenate([[0.0], x[:-1]]))[:2]
    z = x[:2] / rem
    y = special.logit(z) + np.log([2.0, 1.0])
    log_det = np.sum(np.log(rem) + np.log(z) + np.log1p(-z))  # |dx/dy|
    expected = stats.norm(loc, scale).logpdf(y).sum() - log_det
    _close(d.log_prob(t(x)), expected, rtol=1e-9)

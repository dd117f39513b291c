"""Samples checked statistically with fixed seeds: Kolmogorov-Smirnov against scipy's CDFs with 20,000
samples (continuous), means and variances within a few standard errors (all), chi-square (discrete)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import flambeau as fb
import flambeau.distributions as D

N_SAMPLES = 20000
#: KS p-value floor: with fixed seeds a correct sampler fails with probability < 1e-3 per case.
P_FLOOR = 1e-3


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float64))


CONTINUOUS = {
    "Normal": (lambda: D.Normal(t(1.5), t(0.7)), stats.norm(1.5, 0.7)),
    "Uniform": (lambda: D.Uniform(t(-1.0), t(2.0)), stats.uniform(-1.0, 3.0)),
    "Exponential": (lambda: D.Exponential(t(2.5)), stats.expon(scale=0.4)),
    "Laplace": (lambda: D.Laplace(t(0.3), t(1.2)), stats.laplace(0.3, 1.2)),
    "Cauchy": (lambda: D.Cauchy(t(0.3), t(1.2)), stats.cauchy(0.3, 1.2)),
    "HalfNormal": (lambda: D.HalfNormal(t(1.3)), stats.halfnorm(scale=1.3)),
    "HalfCauchy": (lambda: D.HalfCauchy(t(1.3)), stats.halfcauchy(scale=1.3)),
    "LogNormal": (lambda: D.LogNormal(t(0.2), t(0.5)), stats.lognorm(s=0.5, scale=np.exp(0.2))),
    "Gumbel": (lambda: D.Gumbel(t(0.2), t(1.5)), stats.gumbel_r(0.2, 1.5)),
    "Pareto": (lambda: D.Pareto(t(1.5), t(2.5)), stats.pareto(b=2.5, scale=1.5)),
    "Weibull": (lambda: D.Weibull(t(1.5), t(0.8)), stats.weibull_min(c=0.8, scale=1.5)),
    "Gamma(0.3)": (lambda: D.Gamma(t(0.3), t(2.0)), stats.gamma(0.3, scale=0.5)),
    "Gamma(1)": (lambda: D.Gamma(t(1.0), t(1.0)), stats.gamma(1.0)),
    "Gamma(7.5)": (lambda: D.Gamma(t(7.5), t(0.5)), stats.gamma(7.5, scale=2.0)),
    "Chi2": (lambda: D.Chi2(t(3.0)), stats.chi2(3.0)),
    "Beta": (lambda: D.Beta(t(0.7), t(2.5)), stats.beta(0.7, 2.5)),
    "StudentT": (lambda: D.StudentT(t(3.5), t(0.5), t(2.0)), stats.t(3.5, 0.5, 2.0)),
    "FisherSnedecor": (lambda: D.FisherSnedecor(t(4.0), t(7.0)), stats.f(4.0, 7.0)),
    "InverseGamma": (lambda: D.InverseGamma(t(3.0), t(2.0)), stats.invgamma(3.0, scale=2.0)),
    "VonMises": (lambda: D.VonMises(t(0.5), t(2.0)), stats.vonmises(2.0, loc=0.5)),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(t(0.5), t(2.0), t(0.3)), stats.genpareto(0.3, 0.5, 2.0)),
    "Kumaraswamy": (lambda: D.Kumaraswamy(t(2.0), t(3.0)), None),  # CDF written out below
}


def _kumaraswamy_cdf(x, a=2.0, b=3.0):
    return 1 - (1 - np.clip(x, 0, 1) ** a) ** b


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_kolmogorov_smirnov(name):
    make, ref = CONTINUOUS[name]
    samples = make().sample((N_SAMPLES,))
    assert tuple(samples.shape) == (N_SAMPLES,) and samples.dtype == fb.float64
    cdf = _kumaraswamy_cdf if name == "Kumaraswamy" else ref.cdf
    assert stats.kstest(samples.numpy(), cdf).pvalue > P_FLOOR


@pytest.mark.parametrize("name", ["Normal", "Gamma(0.3)", "Gamma(7.5)", "Beta", "Exponential", "LogNormal"])
def test_rsample_has_the_same_law(name):
    make, ref = CONTINUOUS[name]
    samples = make().rsample((N_SAMPLES,))
    assert stats.kstest(samples.numpy(), ref.cdf).pvalue > P_FLOOR


def test_gamma_sampler_in_float32_and_tiny_concentration():
    g = D.Gamma(fb.tensor([0.01, 0.2, 50.0], dtype=fb.float32), fb.tensor(1.0, dtype=fb.float32))
    s = g.sample((N_SAMPLES,))
    assert s.dtype == fb.float32
    x = s.numpy().astype(np.float64)
    assert (x > 0).all() and np.isfinite(x).all()
    for i, a in enumerate([0.2, 50.0], start=1):
        assert stats.kstest(x[:, i], stats.gamma(a).cdf).pvalue > P_FLOOR
    # Gamma(0.01) puts ~42% of its mass below float32's tiny: those draws are clamped to tiny (as PyTorch's)
    tiny = float(np.finfo(np.float32).tiny)
    clamped = (x[:, 0] <= tiny).mean()
    expected = stats.gamma(0.01).cdf(tiny)
    assert abs(clamped - expected) < 5 * np.sqrt(expected * (1 - expected) / N_SAMPLES)
    above = x[:, 0][x[:, 0] > tiny]
    conditional = (stats.gamma(0.01).cdf(above) - expected) / (1 - expected)
    assert stats.kstest(conditional, "uniform").pvalue > P_FLOOR


def _moments_within(samples, mean, var, k=5.0):
    samples = np.asarray(samples, dtype=np.float64)
    n = samples.shape[0]
    se = np.sqrt(var / n)
    assert np.all(np.abs(samples.mean(0) - mean) < k * se + 1e-12), (samples.mean(0), mean)


DISCRETE = {
    "Bernoulli": (lambda: D.Bernoulli(t([0.1, 0.7])), stats.bernoulli([0.1, 0.7])),
    "Binomial": (lambda: D.Binomial(t([3.0, 150.0]), t([0.3, 0.8])), stats.binom([3, 150], [0.3, 0.8])),
    "Geometric": (lambda: D.Geometric(t([0.2, 0.9])), stats.geom([0.2, 0.9], loc=-1)),
    "Poisson": (lambda: D.Poisson(t([0.5, 40.0])), stats.poisson([0.5, 40.0])),
    "NegativeBinomial": (lambda: D.NegativeBinomial(t([2.0, 6.5]), t([0.3, 0.6])),
                         stats.nbinom([2.0, 6.5], [0.7, 0.4])),
}


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_moments_and_chi_square(name):
    make, ref = DISCRETE[name]
    x = make().sample((N_SAMPLES,)).numpy()
    _moments_within(x, ref.mean(), ref.var())
    # chi-square over the values with expected count >= 20 in the first component, the rest pooled
    col = x[:, 0]
    values = np.arange(0, int(col.max()) + 1)
    pmf = ref.pmf(values[:, None])[:, 0]
    keep = pmf * N_SAMPLES >= 20
    observed = np.array([(col == v).sum() for v in values[keep]])
    expected = pmf[keep] * N_SAMPLES
    observed = np.append(observed, N_SAMPLES - observed.sum())
    expected = np.append(expected, N_SAMPLES - expected.sum())
    assert stats.chisquare(observed, expected).pvalue > P_FLOOR


def test_categorical_and_multinomial_frequencies():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    x = D.Categorical(t(probs)).sample((N_SAMPLES,)).numpy()
    counts = np.bincount(x, minlength=4)
    assert stats.chisquare(counts, probs * N_SAMPLES).pvalue > P_FLOOR
    m = D.Multinomial(10, t(probs)).sample((2000,)).numpy()
    assert (m.sum(-1) == 10).all()
    _moments_within(m, 10 * probs, 10 * probs * (1 - probs))
    oh = D.OneHotCategorical(t(probs)).sample((N_SAMPLES,)).numpy()
    assert (oh.sum(-1) == 1).all()
    assert stats.chisquare(oh.sum(0), probs * N_SAMPLES).pvalue > P_FLOOR


def test_multivariate_samples_have_the_covariance():
    cov = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.5]])
    loc = np.array([1.0, -2.0, 0.5])
    for d in (D.MultivariateNormal(t(loc), covariance_matrix=t(cov)),
              D.LowRankMultivariateNormal(t(loc), t(np.linalg.cholesky(cov - 0.2 * np.eye(3))),
                                          t(np.full(3, 0.2)))):
        x = d.sample((N_SAMPLES,)).numpy()
        _moments_within(x, loc, np.diag(cov))
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)


def test_dirichlet_samples():
    alpha = np.array([0.3, 1.0, 4.0])
    x = D.Dirichlet(t(alpha)).sample((N_SAMPLES,)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    ref = stats.dirichlet(alpha)
    _moments_within(x, ref.mean(), ref.var())
    # each marginal is Beta(alpha_i, sum - alpha_i)
    assert stats.kstest(x[:, 0], stats.beta(0.3, 5.0).cdf).pvalue > P_FLOOR


def test_mixture_same_family_samples():
    mix = D.Categorical(t([0.3, 0.7]))
    comp = D.Normal(t([-2.0, 3.0]), t([0.5, 1.0]))
    gmm = D.MixtureSameFamily(mix, comp)
    x = gmm.sample((N_SAMPLES,)).numpy()

    def cdf(v):
        return 0.3 * stats.norm(-2, 0.5).cdf(v) + 0.7 * stats.norm(3, 1).cdf(v)

    assert stats.kstest(x, cdf).pvalue > P_FLOOR
    np.testing.assert_allclose(gmm.cdf(t(np.array([0.0, 3.0]))).numpy(), cdf(np.array([0.0, 3.0])), rtol=1e-9)


def test_relaxed_samples():
    x = D.RelaxedBernoulli(t(0.5), probs=t(0.3)).rsample((N_SAMPLES,)).numpy()
    assert ((x > 0) & (x < 1)).all()
    # as the temperature goes to 0 the mass concentrates at 1 with probability p
    cold = D.RelaxedBernoulli(t(0.01), probs=t(0.3)).sample((N_SAMPLES,)).numpy()
    _moments_within((cold > 0.5).astype(float), 0.3, 0.21)
    y = D.RelaxedOneHotCategorical(t(0.01), probs=t([0.2, 0.8])).sample((N_SAMPLES,)).numpy()
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-9)
    _moments_within((y[:, 1] > 0.5).astype(float), 0.8, 0.16)


def test_same_seed_same_samples():
    d = D.Gamma(t([0.5, 3.0]), t(1.0))
    fb.manual_seed(7)
    a = d.sample((100,)).numpy()
    fb.manual_seed(7)
    b = d.sample((100,)).numpy()
    np.testing.assert_array_equal(a, b)


def test_sample_shapes():
    d = D.Normal(fb.zeros(2, 3, dtype=fb.float64), 1.0)
    assert tuple(d.sample().shape) == (2, 3)
    assert tuple(d.sample((4, 5)).shape) == (4, 5, 2, 3)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert tuple(d.sample_n(7).shape) == (7, 2, 3)
    mvn = D.MultivariateNormal(fb.zeros(4, 3), scale_tril=fb.eye(3))
    assert tuple(mvn.rsample((2,)).shape) == (2, 4, 3)
    assert tuple(mvn.batch_shape) == (4,) and tuple(mvn.event_shape) == (3,)


def test_sampling_ops_check_their_arguments():
    from flambeau.ops import fn

    with pytest.raises(RuntimeError, match="dist_binomial: count must be finite"):
        fn.dist_binomial(t([float("inf"), 2.0]), t([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="dist_standard_gamma: expected a floating-point alpha"):
        fn.dist_standard_gamma(fb.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="alpha and sample must have the same shape"):
        fn.dist_standard_gamma_grad(t([1.0, 2.0]), t([1.0]))
    g = fb.Generator().manual_seed(5)
    a = fn.dist_standard_gamma(t([0.5, 3.0]), g)
    b = fn.dist_standard_gamma(t([0.5, 3.0]), fb.Generator().manual_seed(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_gamma_composite_edges_match_the_kernel():
    # The composite (used by backends without a kernel) and the CPU kernel agree at the edges, as PyTorch:
    # alpha <= 0 or NaN gives the dtype's tiny, infinity gives infinity (and neither loops forever).
    from flambeau.distributions import _samplers
    from flambeau.ops import fn

    alpha = t([0.0, -0.5, -3.0, float("nan"), float("inf")])
    tiny = float(fb.finfo(fb.float64).tiny)
    for out in (_samplers.standard_gamma(alpha), fn.dist_standard_gamma(alpha)):
        np.testing.assert_array_equal(out.numpy(), [tiny, tiny, tiny, tiny, np.inf])


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_gamma_rsample_gradient_kernel_matches_composite(dtype):
    # d sample / d alpha from the op's kernel (through autograd) against the composite's igamma difference
    from flambeau.distributions import _samplers

    alpha = fb.tensor([0.02, 0.5, 1.0, 3.0, 40.0, 2500.0], dtype=dtype).requires_grad_()
    fb.manual_seed(2)
    x = D.Gamma(alpha, fb.ones((), dtype=dtype)).rsample()
    x.sum().backward()
    expected = _samplers.standard_gamma_grad(alpha.detach().to(fb.float64), x.detach().to(fb.float64))
    np.testing.assert_allclose(alpha.grad.numpy().astype(np.float64), expected.numpy(), rtol=2e-4)


def test_poisson_sample_goes_through_the_dist_poisson_op():
    # Poisson.sample draws with the op (C++ PTRS on CPU): the law by chi-square over a small and a
    # large rate, the seed reproduces, and the op checks its rate like PyTorch's poisson
    from flambeau.ops import fn

    for rate in (3.0, 250.0):
        fb.manual_seed(6)
        x = D.Poisson(t([rate])).sample((20000,)).numpy().reshape(-1)
        law = stats.poisson(rate)
        lo, hi = int(law.ppf(1e-3)), int(law.ppf(1 - 1e-3))
        observed = np.array([np.sum(x < lo)] + [np.sum(x == k) for k in range(lo, hi + 1)] + [np.sum(x > hi)])
        expected = np.concatenate(([law.cdf(lo - 1)], law.pmf(np.arange(lo, hi + 1)), [law.sf(hi)])) * x.size
        keep = expected > 5
        scaled = expected[keep] * observed[keep].sum() / expected[keep].sum()
        assert stats.chisquare(observed[keep], scaled).pvalue > 1e-3
    fb.manual_seed(6)
    a = D.Poisson(t([4.0, 40.0])).sample((5,))
    fb.manual_seed(6)
    np.testing.assert_array_equal(a.numpy(), D.Poisson(t([4.0, 40.0])).sample((5,)).numpy())
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        fn.dist_poisson(t([-1.0]))
    with pytest.raises(RuntimeError, match="dist_poisson: expected a floating-point rate"):
        fn.dist_poisson(fb.tensor([1, 2]))

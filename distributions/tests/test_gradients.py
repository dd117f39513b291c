"""Gradients: ``gradcheck`` of ``log_prob`` in the parameters and of ``rsample`` (fixed noise) in float64;
the implicit reparameterisation gradient of the gamma sampler against the CDF's derivative computed
with scipy; and the pathwise and score-function examples of the seed as tests."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import flambeau as fb
import flambeau.distributions as D
from flambeau.autograd import gradcheck


def leaf(values):
    return fb.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def x64(values):
    return fb.tensor(np.asarray(values, dtype=np.float64))


LOG_PROB_CASES = {
    "Normal": (lambda a, b: D.Normal(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "Laplace": (lambda a, b: D.Laplace(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "Cauchy": (lambda a, b: D.Cauchy(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "Gamma": (lambda a, b: D.Gamma(a, b), [0.7, 3.0], [0.5, 2.0], [0.4, 1.7]),
    "Beta": (lambda a, b: D.Beta(a, b), [0.7, 3.0], [0.5, 2.0], [0.4, 0.9]),
    "Gumbel": (lambda a, b: D.Gumbel(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "LogNormal": (lambda a, b: D.LogNormal(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "Weibull": (lambda a, b: D.Weibull(a, b), [1.3, 0.7], [0.5, 2.0], [0.4, 1.7]),
    "StudentT": (lambda a, b: D.StudentT(a, b), [2.3, 5.0], [0.5, -2.0], [0.1, 0.7]),
    "FisherSnedecor": (lambda a, b: D.FisherSnedecor(a, b), [2.3, 5.0], [3.5, 6.0], [0.4, 1.7]),
    "Kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b), [0.7, 3.0], [0.5, 2.0], [0.4, 0.9]),
    "VonMises": (lambda a, b: D.VonMises(a, b), [0.3, -1.0], [0.5, 2.0], [0.1, 0.7]),
    "Bernoulli(logits)": (lambda a, b: D.Bernoulli(logits=a * b), [0.3, -1.0], [0.5, 2.0], [0.0, 1.0]),
    "Binomial(logits)": (lambda a, b: D.Binomial(5, logits=a * b), [0.3, -1.0], [0.5, 2.0], [2.0, 4.0]),
    "Poisson": (lambda a, b: D.Poisson(a * b), [0.3, 1.0], [0.5, 2.0], [0.0, 3.0]),
}


@pytest.mark.parametrize("name", sorted(LOG_PROB_CASES))
def test_gradcheck_log_prob(name):
    make, a, b, x = LOG_PROB_CASES[name]
    value = x64(x)
    assert gradcheck(lambda p, q: make(p, q).log_prob(value), (leaf(a), leaf(b)))


def test_gradcheck_multivariate_normal_log_prob_and_entropy():
    loc = leaf([0.3, -0.2, 0.1])
    m = np.array([[1.0, 0.0, 0.0], [0.4, 1.2, 0.0], [-0.3, 0.2, 0.8]])
    tril = leaf(m)
    value = x64([[0.1, 0.2, -0.5], [1.0, -1.0, 0.0]])
    assert gradcheck(lambda mu, L: D.MultivariateNormal(mu, scale_tril=L.tril()).log_prob(value), (loc, tril))
    cov = leaf(m @ m.T)
    assert gradcheck(lambda mu, c: D.MultivariateNormal(mu, covariance_matrix=(c + c.mT) / 2).log_prob(value),
                     (loc, cov))


def _fixed_noise(fn):
    """Run ``fn`` with the same random stream each time, so that gradcheck sees a deterministic function."""
    def wrapped(*args):
        fb.manual_seed(1234)
        return fn(*args)
    return wrapped


@pytest.mark.parametrize("make", [
    lambda a, b: D.Normal(a, b), lambda a, b: D.Laplace(a, b), lambda a, b: D.Cauchy(a, b),
    lambda a, b: D.LogNormal(a, b), lambda a, b: D.Gumbel(a, b), lambda a, b: D.Uniform(a, a + b),
    lambda a, b: D.Weibull(b, a + 1), lambda a, b: D.Pareto(b, a + 1),
    lambda a, b: D.MultivariateNormal(a, scale_tril=fb.diag_embed(b)),
    lambda a, b: D.LowRankMultivariateNormal(a, b.unsqueeze(-1), b * b),
], ids=["Normal", "Laplace", "Cauchy", "LogNormal", "Gumbel", "Uniform", "Weibull", "Pareto", "MVN",
        "LowRankMVN"])
def test_gradcheck_pathwise_rsample(make):
    a, b = leaf([0.3, 1.2]), leaf([0.5, 2.0])
    assert gradcheck(_fixed_noise(lambda p, q: make(p, q).rsample((3,))), (a, b))


def _gamma_cdf_dalpha(alpha, x, h=1e-6):
    """dP(alpha, x)/dalpha by a central difference of scipy's regularised incomplete gamma function."""
    return (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)


@pytest.mark.parametrize("alpha", [0.05, 0.4, 1.0, 3.5, 40.0, 900.0])
def test_standard_gamma_implicit_gradient(alpha):
    a = fb.full((500,), alpha, dtype=fb.float64, requires_grad=True)
    x = D.Gamma(a, 1.0).rsample()
    x.sum().backward()
    xs = x.detach().numpy()
    expected = -_gamma_cdf_dalpha(alpha, xs) / stats.gamma(alpha).pdf(xs)
    ok = np.isfinite(expected)
    np.testing.assert_allclose(a.grad.numpy()[ok], expected[ok], rtol=2e-4, atol=1e-9)


def test_gamma_rsample_rate_gradient_is_pathwise():
    rate = fb.tensor([0.5, 2.0], dtype=fb.float64, requires_grad=True)
    fb.manual_seed(3)
    x = D.Gamma(fb.tensor([1.5, 2.5], dtype=fb.float64), rate).rsample((50,))
    x.sum().backward()
    # x = G / rate: dx/drate = -x / rate
    np.testing.assert_allclose(rate.grad.numpy(), (-x.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-12)


def test_gamma_mean_gradient_is_unbiased():
    # d E[X] / d alpha = 1 for Gamma(alpha, 1): the mean of the pathwise gradients estimates it
    a = fb.full((20000,), 2.5, dtype=fb.float64, requires_grad=True)
    D.Gamma(a, 1.0).rsample().sum().backward()
    g = a.grad.numpy()
    assert abs(g.mean() - 1.0) < 5 * g.std() / np.sqrt(g.size)


def test_beta_and_dirichlet_rsample_gradients_estimate_mean_gradients():
    # E[X1] = a / (a + b): d/da = b / (a + b)^2
    a = fb.full((20000,), 2.0, dtype=fb.float64, requires_grad=True)
    b = fb.full((20000,), 3.0, dtype=fb.float64, requires_grad=True)
    D.Beta(a, b).rsample().sum().backward()
    ga, gb = a.grad.numpy(), b.grad.numpy()
    assert abs(ga.mean() - 3.0 / 25) < 5 * ga.std() / np.sqrt(ga.size)
    assert abs(gb.mean() + 2.0 / 25) < 5 * gb.std() / np.sqrt(gb.size)
    conc = fb.tensor(np.tile([2.0, 3.0, 5.0], (20000, 1)), requires_grad=True)
    D.Dirichlet(conc).rsample()[:, 0].sum().backward()
    g = conc.grad.numpy()
    np.testing.assert_allclose(g.mean(0), [8.0 / 100, -2.0 / 100, -2.0 / 100], atol=5 * g.std(0).max() / np.sqrt(20000))


def test_reinforce_example():
    # the score-function estimator of the seed: loss = -log_prob(action) * reward
    logits = fb.tensor([0.1, 0.5, -0.3], dtype=fb.float64, requires_grad=True)
    m = D.Categorical(logits=logits)
    action = m.sample()
    reward = 2.0
    loss = -m.log_prob(action) * reward
    loss.backward()
    p = special.softmax(logits.detach().numpy())
    expected = -reward * (np.eye(3)[int(action.item())] - p)
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-12)


def test_pathwise_example():
    # the pathwise estimator of the seed: action = m.rsample(); loss = -reward(action)
    params = fb.tensor([0.5, 1.5], dtype=fb.float64, requires_grad=True)
    m = D.Normal(params[0], params[1])
    fb.manual_seed(11)
    action = m.rsample()
    loss = -(action * 3.0)
    loss.backward()
    eps = (action.detach().item() - 0.5) / 1.5
    np.testing.assert_allclose(params.grad.numpy(), [-3.0, -3.0 * eps], rtol=1e-12)


def test_straight_through_gradient():
    logits = fb.tensor([0.1, 0.5, -0.3], dtype=fb.float64, requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample()
    assert sorted(s.detach().numpy().tolist()) == [0.0, 0.0, 1.0]
    (s * x64([1.0, 2.0, 3.0])).sum().backward()
    p = special.softmax(logits.detach().numpy())
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(logits.grad.numpy(), p * (w - (p * w).sum()), rtol=1e-12)


def test_exponential_family_entropy_matches_closed_form():
    # ExponentialFamily.entropy (Bregman, through autograd) against each class's closed form
    from flambeau.distributions import ExponentialFamily

    cases = [D.Normal(x64([0.3, 1.0]), x64([0.5, 2.0])), D.Gamma(x64([0.7, 3.0]), x64([0.5, 2.0])),
             D.Exponential(x64([0.5, 2.0])), D.Bernoulli(x64([0.2, 0.7])), D.Poisson(x64([0.5, 3.0])),
             D.ContinuousBernoulli(x64([0.2, 0.7]))]
    for d in cases:
        if isinstance(d, D.Poisson):
            continue  # its carrier measure's mean (E[log k!]) has no closed form: PyTorch defines none
        np.testing.assert_allclose(ExponentialFamily.entropy(d).detach().numpy(), d.entropy().numpy(), rtol=1e-9)


def test_composites_match_the_law_and_gradient():
    # The CPU backend has kernels for these ops: the composites (what other backends run) are called
    # directly here, so that they are checked as well.
    from flambeau.distributions import _samplers

    alpha = fb.full((20000,), 0.7, dtype=fb.float64, requires_grad=True)
    x = _samplers.standard_gamma(alpha)
    assert stats.kstest(x.detach().numpy(), stats.gamma(0.7).cdf).pvalue > 1e-3
    x[:500].sum().backward()
    xs = x.detach().numpy()[:500]
    expected = -_gamma_cdf_dalpha(0.7, xs) / stats.gamma(0.7).pdf(xs)
    np.testing.assert_allclose(alpha.grad.numpy()[:500], expected, rtol=2e-4, atol=1e-9)
    b = _samplers.binomial(x64(np.full(20000, 9.0)), x64(np.full(20000, 0.3))).numpy()
    assert abs(b.mean() - 2.7) < 5 * np.sqrt(9 * 0.21 / 20000)
    assert set(np.unique(b)) <= set(range(10))

"""KL divergences: every registered closed form against a Monte Carlo estimate
``mean(log p(x) - log q(x))`` over samples of ``p``, and the dispatch rules of ``register_kl``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as fb
import flambeau.distributions as D
from flambeau.distributions.kl import _KL_REGISTRY

N = 40000


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float64))


def _mvn(shift=0.0):
    L = np.array([[1.0, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.1]]) * (1 + shift)
    return D.MultivariateNormal(t([0.1 + shift, -0.3, 0.5]), scale_tril=t(L))


def _lowrank(shift=0.0):
    W = np.array([[0.5, 0.1], [-0.2, 0.7], [0.3, 0.3]]) * (1 + shift)
    return D.LowRankMultivariateNormal(t([0.2 - shift, 0.1, 0.0]), t(W), t([0.6, 0.9 + shift, 1.2]))


# (p, q) pairs with finite KL; each p can be sampled.
PAIRS = {
    "Normal-Normal": (D.Normal(t([0.3, -1.0]), t([0.8, 1.5])), D.Normal(t([0.0, 0.5]), t([1.2, 0.7]))),
    "Bernoulli-Bernoulli": (D.Bernoulli(t([0.2, 0.7])), D.Bernoulli(t([0.5, 0.4]))),
    "Beta-Beta": (D.Beta(t([2.0, 0.8]), t([3.0, 1.5])), D.Beta(t([1.2, 2.0]), t([0.9, 2.5]))),
    "Binomial-Binomial": (D.Binomial(t([6.0]), t([0.3])), D.Binomial(t([6.0]), t([0.6]))),
    "Categorical-Categorical": (D.Categorical(t([0.2, 0.3, 0.5])), D.Categorical(t([0.4, 0.4, 0.2]))),
    "Cauchy-Cauchy": (D.Cauchy(t(0.5), t(1.0)), D.Cauchy(t(-0.5), t(2.0))),
    "ContinuousBernoulli-ContinuousBernoulli": (D.ContinuousBernoulli(t([0.2, 0.8])),
                                                D.ContinuousBernoulli(t([0.6, 0.3]))),
    "Dirichlet-Dirichlet": (D.Dirichlet(t([2.0, 3.0, 1.5])), D.Dirichlet(t([1.0, 1.0, 4.0]))),
    "Exponential-Exponential": (D.Exponential(t([0.5, 2.0])), D.Exponential(t([1.0, 1.0]))),
    "Gamma-Gamma": (D.Gamma(t([2.0, 0.8]), t([1.0, 2.0])), D.Gamma(t([1.5, 1.0]), t([0.5, 1.5]))),
    "Gumbel-Gumbel": (D.Gumbel(t(0.5), t(1.0)), D.Gumbel(t(-0.2), t(1.5))),
    "Geometric-Geometric": (D.Geometric(t([0.3, 0.7])), D.Geometric(t([0.5, 0.5]))),
    "HalfNormal-HalfNormal": (D.HalfNormal(t(1.0)), D.HalfNormal(t(2.0))),
    "Laplace-Laplace": (D.Laplace(t(0.5), t(1.0)), D.Laplace(t(-0.2), t(1.5))),
    "LowRank-LowRank": (_lowrank(), _lowrank(0.3)),
    "MVN-LowRank": (_mvn(), _lowrank(0.3)),
    "LowRank-MVN": (_lowrank(), _mvn(0.3)),
    "MVN-MVN": (_mvn(), _mvn(0.3)),
    "OneHotCategorical-OneHotCategorical": (D.OneHotCategorical(t([0.2, 0.3, 0.5])),
                                            D.OneHotCategorical(t([0.4, 0.4, 0.2]))),
    "Pareto-Pareto": (D.Pareto(t(2.0), t(3.0)), D.Pareto(t(1.5), t(2.0))),
    "Poisson-Poisson": (D.Poisson(t([2.0, 5.0])), D.Poisson(t([3.0, 4.0]))),
    "Uniform-Uniform": (D.Uniform(t(0.2), t(0.8)), D.Uniform(t(0.0), t(1.5))),
    "Independent-Independent": (D.Independent(D.Normal(t([0.3, -1.0]), t([0.8, 1.5])), 1),
                                D.Independent(D.Normal(t([0.0, 0.5]), t([1.2, 0.7])), 1)),
    "LogNormal-LogNormal (transformed)": (D.LogNormal(t(0.3), t(0.8)), D.LogNormal(t(0.0), t(1.2))),
    "Bernoulli-Poisson": (D.Bernoulli(t(0.3)), D.Poisson(t(0.8))),
    "Beta-ContinuousBernoulli": (D.Beta(t(2.0), t(3.0)), D.ContinuousBernoulli(t(0.3))),
    "Beta-Exponential": (D.Beta(t(2.0), t(3.0)), D.Exponential(t(2.0))),
    "Beta-Gamma": (D.Beta(t(2.0), t(3.0)), D.Gamma(t(2.0), t(1.5))),
    "Beta-Normal": (D.Beta(t(2.0), t(3.0)), D.Normal(t(0.4), t(0.5))),
    "Beta-Uniform": (D.Beta(t(2.0), t(3.0)), D.Uniform(t(-0.5), t(1.5))),
    "ContinuousBernoulli-Exponential": (D.ContinuousBernoulli(t(0.3)), D.Exponential(t(2.0))),
    "ContinuousBernoulli-Normal": (D.ContinuousBernoulli(t(0.3)), D.Normal(t(0.4), t(0.5))),
    "ContinuousBernoulli-Uniform": (D.ContinuousBernoulli(t(0.3)), D.Uniform(t(-0.5), t(1.5))),
    "Exponential-Gamma": (D.Exponential(t(1.5)), D.Gamma(t(2.0), t(1.5))),
    "Exponential-Gumbel": (D.Exponential(t(1.5)), D.Gumbel(t(0.5), t(1.5))),
    "Exponential-Normal": (D.Exponential(t(1.5)), D.Normal(t(0.4), t(1.5))),
    "Gamma-Exponential": (D.Gamma(t(2.0), t(1.5)), D.Exponential(t(1.5))),
    "Gamma-Gumbel": (D.Gamma(t(2.0), t(1.5)), D.Gumbel(t(0.5), t(1.5))),
    "Gamma-Normal": (D.Gamma(t(2.0), t(1.5)), D.Normal(t(0.4), t(1.5))),
    "Gumbel-Normal": (D.Gumbel(t(0.5), t(1.5)), D.Normal(t(0.4), t(1.5))),
    "Laplace-Normal": (D.Laplace(t(0.5), t(1.5)), D.Normal(t(0.4), t(1.5))),
    "Normal-Gumbel": (D.Normal(t(0.4), t(1.5)), D.Gumbel(t(0.5), t(1.5))),
    "Normal-Laplace": (D.Normal(t(0.4), t(1.5)), D.Laplace(t(0.5), t(1.5))),
    "Pareto-Exponential": (D.Pareto(t(1.5), t(3.0)), D.Exponential(t(1.5))),
    "Pareto-Gamma": (D.Pareto(t(1.5), t(3.0)), D.Gamma(t(2.0), t(1.5))),
    "Pareto-Normal": (D.Pareto(t(1.5), t(4.5)), D.Normal(t(0.4), t(1.5))),
    "Uniform-Beta": (D.Uniform(t(0.2), t(0.8)), D.Beta(t(2.0), t(3.0))),
    "Uniform-ContinuousBernoulli": (D.Uniform(t(0.2), t(0.8)), D.ContinuousBernoulli(t(0.3))),
    "Uniform-Exponential": (D.Uniform(t(0.2), t(0.8)), D.Exponential(t(1.5))),
    "Uniform-Gamma": (D.Uniform(t(0.2), t(0.8)), D.Gamma(t(2.0), t(1.5))),
    "Uniform-Gumbel": (D.Uniform(t(0.2), t(0.8)), D.Gumbel(t(0.5), t(1.5))),
    "Uniform-Normal": (D.Uniform(t(0.2), t(0.8)), D.Normal(t(0.4), t(1.5))),
    "Uniform-Pareto": (D.Uniform(t(1.7), t(2.8)), D.Pareto(t(1.5), t(3.0))),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_closed_form_matches_monte_carlo(name):
    p, q = PAIRS[name]
    exact = D.kl_divergence(p, q).numpy()
    x = p.sample((N,))
    log_ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
    mc = log_ratio.mean(0)
    se = log_ratio.std(0) / np.sqrt(N)
    assert np.all(np.abs(mc - exact) < 5 * se + 1e-6), (mc, exact, se)


def test_exponential_family_bregman_kl_matches_closed_form():
    from flambeau.distributions.kl import _kl_expfamily_expfamily

    for p, q in [PAIRS["Normal-Normal"], PAIRS["Gamma-Gamma"], PAIRS["Beta-Beta"], PAIRS["Dirichlet-Dirichlet"],
                 PAIRS["Poisson-Poisson"], PAIRS["Exponential-Exponential"]]:
        np.testing.assert_allclose(_kl_expfamily_expfamily(p, q).detach().numpy(), D.kl_divergence(p, q).numpy(),
                                   rtol=1e-8, atol=1e-12)


def test_infinite_pairs():
    assert np.isinf(D.kl_divergence(D.Normal(t(0.0), t(1.0)), D.Exponential(t(1.0))).item())
    assert np.isinf(D.kl_divergence(D.Uniform(t(0.0), t(2.0)), D.Uniform(t(0.5), t(1.0))).item())
    assert np.isinf(D.kl_divergence(D.Poisson(t(1.0)), D.Bernoulli(t(0.5))).item())
    assert D.kl_divergence(D.Bernoulli(t(0.0)), D.Bernoulli(t(0.5))).item() == pytest.approx(np.log(2))
    assert np.isinf(D.kl_divergence(D.Bernoulli(t(0.5)), D.Bernoulli(t(0.0))).item())


def test_every_registered_pair_is_exercised():
    names = {(type(p), type(q)) for p, q in PAIRS.values()}
    infinite = {k for k, f in _KL_REGISTRY.items() if f.__name__.endswith("_infinity")}
    untested = {k for k in _KL_REGISTRY if k not in names and k not in infinite
                and k != (D.ExponentialFamily, D.ExponentialFamily)
                and k != (D.TransformedDistribution, D.TransformedDistribution)}
    assert not untested, sorted((a.__name__, b.__name__) for a, b in untested)


def test_not_implemented_names_the_types():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type VonMises and q type "
                                                  "Normal"):
        D.kl_divergence(D.VonMises(t(0.0), t(1.0)), D.Normal(t(0.0), t(1.0)))


def test_register_kl_most_specific_match():
    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return fb.tensor(-7.0)

    try:
        p, q = MyNormal(t(0.0), t(1.0)), D.Normal(t(0.0), t(1.0))
        assert D.kl_divergence(p, q).item() == -7.0  # more specific than (Normal, Normal)
        assert D.kl_divergence(q, p).item() == 0.0   # (Normal, Normal) still applies the other way

        @D.register_kl(D.Normal, MyOtherNormal)
        def _kl_other(p, q):
            return fb.tensor(-8.0)

        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence\\(MyNormal, MyOtherNormal\\)"):
            assert D.kl_divergence(p, MyOtherNormal(t(0.0), t(1.0))).item() == -7.0
    finally:
        for key in [(MyNormal, D.Normal), (D.Normal, MyOtherNormal)]:
            _KL_REGISTRY.pop(key, None)
        from flambeau.distributions.kl import _KL_MEMOIZE
        _KL_MEMOIZE.clear()


def test_register_kl_rejects_non_distributions():
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
    with pytest.raises(TypeError, match="Expected type_q to be a Distribution subclass"):
        D.register_kl(D.Normal, 3)


def test_kl_errors():
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(t(3.0), t(0.5)), D.Binomial(t(5.0), t(0.5)))
    with pytest.raises(NotImplementedError, match="different exponential families"):
        from flambeau.distributions.kl import _kl_expfamily_expfamily
        _kl_expfamily_expfamily(D.Normal(t(0.0), t(1.0)), D.Gamma(t(1.0), t(1.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="different event shapes"):
            D.kl_divergence(D.MultivariateNormal(fb.zeros(2), fb.eye(2)), D.MultivariateNormal(fb.zeros(3), fb.eye(3)))

"""Bad input: PyTorch's errors, naming the parameter and the constraint, raised before any work."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.distributions as D
from flambeau.distributions import Distribution, constraints


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float32))


def test_parameter_outside_its_constraint_names_it():
    with pytest.raises(ValueError) as info:
        D.Normal(t([0.0, 1.0, 2.0]), t([1.0, -1.0, 1.0]))
    message = str(info.value)
    assert message.startswith("Expected parameter scale (Tensor of shape (3,)) of distribution "
                              "Normal(loc: ")
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\n" in message
    with pytest.raises(ValueError, match=r"Expected parameter loc \(Tensor of shape \(3,\)\) of distribution "
                                         r"Normal\(loc: .*\) to satisfy the constraint Real\(\), but found invalid "
                                         "values:"):
        D.Normal(t([0.0, float("nan"), 2.0]), t([1.0, 1.0, 1.0]))


@pytest.mark.parametrize("make, param, constraint", [
    (lambda: D.Bernoulli(t([1.5])), "probs", "Interval(lower_bound=0.0, upper_bound=1.0)"),
    (lambda: D.Gamma(t([1.0]), t([0.0])), "rate", "GreaterThan(lower_bound=0.0)"),
    (lambda: D.Categorical(t([[0.5, -0.5, 1.0]])), "probs", "Simplex()"),
    (lambda: D.Dirichlet(t([1.0, -2.0])), "concentration", "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"),
    (lambda: D.Binomial(t([2.5]), t([0.5])), "total_count", "IntegerGreaterThan(lower_bound=0)"),
    (lambda: D.Poisson(t([-1.0])), "rate", "GreaterThanEq(lower_bound=0.0)"),
    (lambda: D.Geometric(t([0.0])), "probs", "GreaterThan(lower_bound=0.0)"),
    (lambda: D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
     "covariance_matrix", "PositiveDefinite()"),
    (lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [2.0, -1.0]])),
     "scale_tril", "LowerCholesky()"),
    (lambda: D.StudentT(t([-1.0])), "df", "GreaterThan(lower_bound=0.0)"),
])
def test_constraint_errors(make, param, constraint):
    with pytest.raises(ValueError, match=f"Expected parameter {param} .* to satisfy the constraint "
                                         f"{constraint.replace('(', '[(]').replace(')', '[)]')}, but found invalid"):
        make()


def test_validation_can_be_turned_off():
    d = D.Normal(t([0.0]), t([-1.0]), validate_args=False)
    assert tuple(d.batch_shape) == (1,)
    Distribution.set_default_validate_args(False)
    D.Normal(t([0.0]), t([-1.0]))
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args("yes")


def test_values_outside_the_support():
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(2,\)\) to be within the "
                                         r"support \(GreaterThanEq\(lower_bound=0.0\)\) of the distribution "
                                         r"Exponential\(rate: .*\), but found invalid values:"):
        D.Exponential(t([1.0, 2.0])).log_prob(t([1.0, -1.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(t(0.0), t(1.0)).log_prob(0.5)
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.MultivariateNormal(t([0.0, 0.0]), fb.eye(2)).log_prob(t([0.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"):
        D.Normal(t([0.0, 0.0]), t([1.0, 1.0])).log_prob(t([0.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="IntegerInterval\\(lower_bound=0, upper_bound=2\\)"):
        D.Categorical(t([0.2, 0.3, 0.5])).log_prob(fb.tensor(3))


def test_shapes_that_do_not_broadcast():
    with pytest.raises(RuntimeError):
        D.Normal(t([0.0, 1.0]), t([1.0, 1.0, 1.0]))


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Bernoulli(t(0.5), t(0.0))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Categorical()
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional."):
        D.Categorical(t(0.5))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(t([0.0]), fb.eye(1), scale_tril=fb.eye(1))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.MultivariateNormal(t(0.0), fb.eye(1))
    with pytest.raises(ValueError, match="Uniform is not defined when low>= high"):
        D.Uniform(t(1.0), t(1.0))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(t([3.0]), t([0.5, 0.5]))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(fb.zeros(3), fb.zeros(2, 1), fb.ones(3))
    with pytest.raises(ValueError, match="does not equal `component_distribution.batch_shape\\[-1\\]`"):
        D.MixtureSameFamily(D.Categorical(t([0.5, 0.5])), D.Normal(fb.zeros(3), fb.ones(3)))
    with pytest.raises(ValueError, match="Input arguments must all be instances of numbers.Number"):
        D.Normal("a", 1.0)


def test_repr():
    assert repr(D.Normal(t(0.0), t(1.0))) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Normal(fb.zeros(3), fb.ones(3))).startswith("Normal(loc: ")
    assert "Size([3])" in repr(D.Normal(fb.zeros(3), fb.ones(3)))
    assert repr(constraints.real) == "Real()"
    assert repr(constraints.interval(0.0, 2.0)) == "Interval(lower_bound=0.0, upper_bound=2.0)"
    assert repr(constraints.real_vector) == "IndependentConstraint(Real(), 1)"


def test_expand_keeps_parameters_as_views():
    for d in [D.Normal(t(0.5), t(2.0)), D.Gamma(t(0.5), t(2.0)), D.Bernoulli(logits=t(0.3)),
              D.Categorical(t([0.2, 0.8])), D.Dirichlet(t([1.0, 2.0])), D.Beta(t(1.0), t(2.0)),
              D.StudentT(t(3.0)), D.LogNormal(t(0.0), t(1.0)), D.Gumbel(t(0.0), t(1.0)),
              D.MultivariateNormal(t([0.0, 1.0]), fb.eye(2)), D.Independent(D.Normal(fb.zeros(2), fb.ones(2)), 1),
              D.Weibull(t(1.0), t(2.0)), D.RelaxedBernoulli(t(0.5), t(0.3)), D.VonMises(t(0.0), t(1.0))]:
        e = d.expand((4, 3))
        assert tuple(e.batch_shape) == (4, 3), type(d).__name__
        assert tuple(e.event_shape) == tuple(d.event_shape)
        x = e.sample()
        assert tuple(x.shape) == (4, 3) + tuple(d.event_shape)
        assert tuple(e.log_prob(x).shape) == (4, 3)


def test_enumerate_support_and_perplexity():
    d = D.Categorical(t([[0.2, 0.8], [0.5, 0.5]]))
    np.testing.assert_array_equal(d.enumerate_support().numpy(), [[0, 0], [1, 1]])
    np.testing.assert_allclose(d.perplexity().numpy(), np.exp(d.entropy().numpy()), rtol=1e-6)
    assert not D.Normal(t(0.0), t(1.0)).has_enumerate_support
    with pytest.raises(NotImplementedError):
        D.Normal(t(0.0), t(1.0)).enumerate_support()


def test_mode():
    np.testing.assert_allclose(D.Gamma(t([3.0, 0.5]), t(2.0)).mode.numpy(), [1.0, 0.0])
    np.testing.assert_allclose(D.Beta(t(3.0), t(2.0)).mode.numpy(), 2.0 / 3.0, rtol=1e-6)
    assert np.isnan(D.Bernoulli(t(0.5)).mode.item())
    np.testing.assert_array_equal(D.Categorical(t([0.2, 0.5, 0.3])).mode.numpy(), 1)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution().mode

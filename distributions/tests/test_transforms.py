"""Transforms: inverses, caching, log-det-Jacobians against numerical Jacobians (numpy central
differences), shapes; constraints' ``check``; ``biject_to``/``transform_to`` land in their constraint."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.distributions as D
from flambeau.distributions import biject_to, constraints, transform_to
from flambeau.distributions import transforms as T

RNG = np.random.default_rng(3)


def t(a):
    return fb.tensor(np.asarray(a, dtype=np.float64))


def _numerical_log_det(transform, x, in_event_dim, out_shape_fn=None, h=1e-6):
    """log|det J| of ``transform`` at one event ``x`` (flattened), by central differences."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    cols = []
    for i in range(flat.size):
        e = np.zeros_like(flat)
        e[i] = h
        hi = transform(t((flat + e).reshape(x.shape))).numpy().reshape(-1)
        lo = transform(t((flat - e).reshape(x.shape))).numpy().reshape(-1)
        cols.append((hi - lo) / (2 * h))
    J = np.stack(cols, axis=-1)
    if out_shape_fn is not None:
        J = out_shape_fn(J)
    return np.linalg.slogdet(J)[1]


BIJECTIONS = {
    "Exp": (T.ExpTransform(), lambda: RNG.normal(size=4), 0),
    "Power": (T.PowerTransform(t(2.5)), lambda: RNG.uniform(0.3, 2.0, size=4), 0),
    "Sigmoid": (T.SigmoidTransform(), lambda: RNG.normal(size=4), 0),
    "Softplus": (T.SoftplusTransform(), lambda: RNG.normal(size=4), 0),
    "Tanh": (T.TanhTransform(), lambda: RNG.normal(size=4), 0),
    "Affine": (T.AffineTransform(t(0.5), t(-2.0)), lambda: RNG.normal(size=4), 0),
    "Affine(event_dim=1)": (T.AffineTransform(t([0.5, 1.0, -1.0]), t([2.0, -0.5, 3.0]), event_dim=1),
                           lambda: RNG.normal(size=3), 1),
    "StickBreaking": (T.StickBreakingTransform(), lambda: RNG.normal(size=3), 1),
    "CorrCholesky": (T.CorrCholeskyTransform(), lambda: RNG.normal(size=3), 1),
    "Compose": (T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]), lambda: RNG.normal(size=4), 0),
    "Independent": (T.IndependentTransform(T.SigmoidTransform(), 1), lambda: RNG.normal(size=3), 1),
    "Cat": (T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0, lengths=[2, 2]),
            lambda: RNG.normal(size=4), 0),
    "Stack": (T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0), lambda: RNG.normal(size=2), 0),
    "Reshape": (T.ReshapeTransform((4,), (2, 2)), lambda: RNG.normal(size=4), 1),
    "CDF": (T.CumulativeDistributionTransform(D.Normal(t(0.0), t(1.0))), lambda: RNG.normal(size=4), 0),
}


@pytest.mark.parametrize("name", sorted(BIJECTIONS))
def test_inverse_round_trip(name):
    transform, sample, _ = BIJECTIONS[name]
    assert transform.bijective
    x = t(sample())
    y = transform(x)
    np.testing.assert_allclose(transform.inv(y).numpy(), x.numpy(), rtol=1e-7, atol=1e-9)
    assert transform.inv.inv is transform
    assert bool(transform.codomain.check(y).all())


@pytest.mark.parametrize("name", sorted(BIJECTIONS))
def test_log_abs_det_jacobian(name):
    transform, sample, event_dim = BIJECTIONS[name]
    x = sample()
    y = transform(t(x))
    ladj = transform.log_abs_det_jacobian(t(x), y).numpy()
    if name == "CorrCholesky":
        # only the strictly lower triangle of the output is free
        rows, cols = np.tril_indices(3, -1)
        expected = _numerical_log_det(transform, x, 1, lambda J: J.reshape(3, 3, -1)[rows, cols])
        np.testing.assert_allclose(ladj, expected, rtol=1e-5)
    elif name == "StickBreaking":
        expected = _numerical_log_det(transform, x, 1, lambda J: J[:-1])
        np.testing.assert_allclose(ladj, expected, rtol=1e-5)
    elif event_dim == 0:
        # elementwise: the diagonal of the Jacobian
        h = 1e-6
        expected = np.log(np.abs((transform(t(x + h)).numpy() - transform(t(x - h)).numpy()) / (2 * h)))
        if name == "Stack":
            expected = expected  # one value per slice, as StackTransform stacks them
        np.testing.assert_allclose(ladj, expected, rtol=1e-5)
    else:
        np.testing.assert_allclose(ladj, _numerical_log_det(transform, x, event_dim), rtol=1e-5, atol=1e-9)


def test_inverse_log_abs_det_jacobian_is_negated():
    tr = T.SigmoidTransform()
    x = t(RNG.normal(size=3))
    y = tr(x)
    np.testing.assert_allclose(tr.inv.log_abs_det_jacobian(y, x).numpy(), -tr.log_abs_det_jacobian(x, y).numpy())


def test_caching_returns_the_cached_input():
    tr = T.ExpTransform(cache_size=1)
    x = t([1.0, 2.0])
    y = tr(x)
    assert tr(x) is y
    assert tr.inv(y) is x
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def test_shapes_and_signs():
    assert tuple(T.StickBreakingTransform().forward_shape((5, 3))) == (5, 4)
    assert tuple(T.StickBreakingTransform().inverse_shape((5, 4))) == (5, 3)
    assert tuple(T.CorrCholeskyTransform().forward_shape((2, 6))) == (2, 4, 4)
    assert tuple(T.CorrCholeskyTransform().inverse_shape((2, 4, 4))) == (2, 6)
    assert tuple(T.ReshapeTransform((4,), (2, 2)).forward_shape((3, 4))) == (3, 2, 2)
    assert T.ExpTransform().sign == 1
    assert T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, -1.0)]).sign == -1
    assert T.ExpTransform().inv.sign == 1
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert not T.AbsTransform().bijective and not T.SoftmaxTransform().bijective


def test_lower_cholesky_and_positive_definite_transforms():
    x = t(RNG.normal(size=(2, 3, 3)))
    L = T.LowerCholeskyTransform()(x)
    assert bool(constraints.lower_cholesky.check(L).all())
    P = T.PositiveDefiniteTransform()(x)
    assert bool(constraints.positive_definite.check(P).all())
    np.testing.assert_allclose(T.PositiveDefiniteTransform().inv(P).numpy(), np.tril(x.numpy(), 0)
                               - np.tril(x.numpy(), 0) + T.LowerCholeskyTransform().inv(L).numpy(), rtol=1e-9)


@pytest.mark.parametrize("constraint", [
    constraints.real, constraints.positive, constraints.nonnegative, constraints.greater_than(2.0),
    constraints.greater_than_eq(-1.0), constraints.less_than(3.0), constraints.unit_interval,
    constraints.interval(-2.0, 5.0), constraints.half_open_interval(0.0, 4.0), constraints.simplex,
    constraints.real_vector, constraints.corr_cholesky, constraints.independent(constraints.positive, 1),
    constraints.cat([constraints.positive, constraints.unit_interval], 0, [2, 2]),
    constraints.stack([constraints.positive, constraints.unit_interval, constraints.real], 0),
])
def test_biject_to_and_transform_to(constraint):
    for registry in (biject_to, transform_to):
        tr = registry(constraint)
        shape = (3,) if constraint in (constraints.simplex, constraints.corr_cholesky, constraints.real_vector) \
            else (4,)
        if isinstance(constraint, type(constraints.stack([constraints.real]))):
            shape = (3,)
        x = t(RNG.normal(size=tuple(tr.inverse_shape(tr.forward_shape(shape)))))
        y = tr(x)
        assert bool(constraint.check(y).all()), (registry, constraint)
        if registry is biject_to:
            assert tr.bijective
            np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-6, atol=1e-8)


def test_registry_errors():
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        biject_to(constraints.lower_cholesky)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        biject_to.register(int, lambda c: T.ExpTransform())


def test_constraint_checks():
    x = t([[0.2, 0.8], [0.5, 0.6]])
    np.testing.assert_array_equal(constraints.simplex.check(x).numpy(), [True, False])
    np.testing.assert_array_equal(constraints.integer_interval(0, 3).check(t([0.0, 1.5, 3.0, 4.0])).numpy(),
                                  [True, False, True, False])
    np.testing.assert_array_equal(constraints.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).numpy(), [True, False])
    np.testing.assert_array_equal(constraints.boolean.check(t([0.0, 1.0, 0.5])).numpy(), [True, True, False])
    np.testing.assert_array_equal(constraints.multinomial(3).check(t([[1.0, 2.0], [2.0, 2.0]])).numpy(),
                                  [True, False])
    np.testing.assert_array_equal(constraints.positive_definite.check(t([[[2.0, 0.5], [0.5, 1.0]],
                                                                        [[1.0, 2.0], [2.0, 1.0]]])).numpy(),
                                  [True, False])
    np.testing.assert_array_equal(constraints.positive_semidefinite.check(t([[1.0, 1.0], [1.0, 1.0]])).numpy(), True)
    np.testing.assert_array_equal(constraints.symmetric.check(t([[1.0, 2.0], [0.0, 1.0]])).numpy(), False)
    np.testing.assert_array_equal(constraints.square.check(fb.zeros(2, 3)).numpy(), False)
    assert constraints.boolean.is_discrete and constraints.nonnegative_integer.is_discrete
    assert not constraints.real.is_discrete
    assert constraints.simplex.event_dim == 1 and constraints.positive_definite.event_dim == 2
    assert constraints.independent(constraints.real, 2).event_dim == 2
    assert constraints.is_dependent(constraints.dependent)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(t([1.0]))
    with pytest.raises(NotImplementedError, match=".is_discrete cannot be determined statically"):
        constraints.dependent.is_discrete


def test_transformed_distribution_log_prob_and_cdf():
    base = D.Normal(t([0.0, 1.0]), t([1.0, 0.5]))
    d = D.TransformedDistribution(base, [T.ExpTransform(), T.AffineTransform(0.0, -1.0)])
    ln = D.LogNormal(t([0.0, 1.0]), t([1.0, 0.5]))
    y = t([-0.5, -3.0])
    np.testing.assert_allclose(d.log_prob(y).numpy(), ln.log_prob(-y).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(y).numpy(), 1 - ln.cdf(-y).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.icdf(d.cdf(y)).numpy(), y.numpy(), rtol=1e-9)
    assert d.has_rsample
    ind = D.TransformedDistribution(D.Normal(fb.zeros(3, dtype=fb.float64), 1.0), T.StickBreakingTransform())
    assert tuple(ind.batch_shape) == () and tuple(ind.event_shape) == (4,)

"""Random ops and autograd: which outputs stay on the graph, and their (zero) derivatives, as PyTorch's.

A sampler's output is not a differentiable function of its parameters in PyTorch's eager API
(``normal(mean, std)``, ``bernoulli(p)``, ``poisson(rate)``, ``x.uniform_()``...): the output requires
grad when an input does, and every derivative is zero. gradcheck does not apply (each evaluation
draws new numbers); these tests check the values, shapes and double backward instead.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._registry import FUNCTIONS

from conftest import make


def _grads(out, *inputs, create_graph=False):
    return fb.autograd.grad(out.sum(), inputs, create_graph=create_graph, allow_unused=True)


def test_normal_tensor_gradients_are_zero_with_broadcast_and_noncontiguous_inputs(rng):
    mean = make(rng, 3, 4, noncontig=True)
    std = make(rng, 4, low=0.5, high=2.0)
    out = fb.normal(mean, std)
    assert out.requires_grad and out.shape == (3, 4)
    gm, gs = _grads(out, mean, std)
    np.testing.assert_array_equal(gm.numpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal(gs.numpy(), np.zeros(4))


@pytest.mark.parametrize("call", [
    lambda m: fb.normal(m, 2.0), lambda m: fb.normal(1.0, m.abs() + 0.5), lambda m: fb.bernoulli(m.sigmoid()),
    lambda m: fb.bernoulli(fb.zeros(3, 2, dtype=fb.float64), m.sigmoid()), lambda m: fb.poisson(m.exp()),
])
def test_sampler_outputs_require_grad_with_zero_derivatives(rng, call):
    x = make(rng, 3, 2)
    out = call(x)
    assert out.requires_grad
    (g,) = _grads(out, x)
    np.testing.assert_array_equal(g.numpy(), np.zeros((3, 2)))


@pytest.mark.parametrize("name,args", [("uniform_", (-1.0, 1.0)), ("normal_", (0.0, 2.0)), ("cauchy_", ()),
                                       ("exponential_", ()), ("geometric_", (0.3,)), ("log_normal_", ()),
                                       ("random_", (0, 5)), ("bernoulli_", (0.5,))])
def test_in_place_samplers_cut_the_gradient_of_what_they_overwrite(rng, name, args):
    x = make(rng, 2, 3)
    y = x * 3
    getattr(y, name)(*args)
    assert y.requires_grad and y.grad_fn is not None
    (g,) = _grads(y + x, x)  # only the direct x term contributes
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))


def test_double_backward_through_a_sampler(rng):
    x = make(rng, 4)
    out = fb.normal(x, 1.0) + x * x
    (g,) = _grads(out, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy())
    (gg,) = _grads(g, x)
    np.testing.assert_allclose(gg.numpy(), np.full(4, 2.0))


def test_multinomial_and_factories_stay_off_the_graph(rng):
    x = make(rng, 5, low=0.1, high=1.0)
    assert not fb.multinomial(x, 3).requires_grad
    assert not FUNCTIONS["rand"]((2,)).requires_grad
    assert fb.rand(2, requires_grad=True).is_leaf


@pytest.mark.parametrize("fn", [fb.rand, fb.randn])
def test_factory_requires_grad_makes_a_leaf(fn):
    # Moved from core-tensor's test_random.py::test_size_forms (core-tensor runs without autograd).
    t = fn(2, 2, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None

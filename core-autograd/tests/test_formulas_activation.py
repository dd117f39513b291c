"""Gradients of core's activation ops: relu's formula (its CPU kernel path) and the composites."""
from __future__ import annotations

import numpy as np

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck


def test_relu_gradient_is_zero_at_zero_and_in_place():
    x = fb.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    fb.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    x = fb.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = x * 1.0
    y.relu_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_gradcheck_of_the_composites():
    rng = np.random.default_rng(0)
    x = fb.tensor(rng.uniform(-2, 2, (3, 4)), requires_grad=True)
    w = fb.tensor(rng.uniform(0.1, 0.5, 4), requires_grad=True)
    assert gradcheck(fb.relu, (x,))
    assert gradcheck(fb.selu, (x,)) and gradgradcheck(fb.selu, (x,))
    assert gradcheck(lambda t: fb.celu(t, 1.5), (x,))
    assert gradcheck(lambda t: fb.hardshrink(t, 0.1), (x,))
    assert gradcheck(lambda t: fb.threshold(t, 0.05, 3.0), (x,))
    assert gradcheck(fb.prelu, (x.reshape(3, 4, 1), w))

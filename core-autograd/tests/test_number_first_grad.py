"""Gradients through the number-first forms (``torch.pow(2, t)``, ``torch.sub(1, t)``): the number is a
constant, the tensor gets the usual derivative."""
from __future__ import annotations

import math

import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("fn", [
    lambda x: fb.pow(2.0, x),
    lambda x: fb.sub(1.5, x, alpha=2),
    lambda x: fb.div(3.0, x),
    lambda x: fb.mul(-0.5, x),
    lambda x: fb.remainder(7.5, x),
])
def test_gradcheck(fn):
    x = fb.tensor([0.7, 1.3, 2.2], dtype=fb.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pow_of_a_number_has_the_exponential_derivative():
    x = fb.tensor([0.0, 1.0, 3.0], dtype=fb.float64, requires_grad=True)
    fb.pow(2.0, x).sum().backward()
    assert x.grad.tolist() == pytest.approx([2.0 ** v * math.log(2.0) for v in (0.0, 1.0, 3.0)])

"""gradcheck and gradgradcheck (float64) for sort, msort, topk, kthvalue, fmax and fmin,
with non-contiguous and broadcast inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

from conftest import make


def check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("dim,descending", [(0, False), (1, True), (-1, False)])
def test_sort(rng, dim, descending):
    x = make(rng, 3, 5, noncontig=True)
    check(lambda t: fb.sort(t, dim, descending).values, x)


def test_msort(rng):
    x = make(rng, 4, 3, noncontig=True)
    check(fb.msort, x)


@pytest.mark.parametrize("k,dim,largest", [(2, 1, True), (3, 0, False), (5, -1, True)])
def test_topk(rng, k, dim, largest):
    x = make(rng, 4, 5, noncontig=True)
    check(lambda t: fb.topk(t, k, dim, largest).values, x)


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(rng, keepdim):
    x = make(rng, 3, 5, noncontig=True)
    check(lambda t: fb.kthvalue(t, 2, 1, keepdim).values, x)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_broadcast(rng, name):
    x, y = make(rng, 3, 4, noncontig=True), make(rng, 4)
    check(getattr(fb, name), x, y)


def test_fmax_nan_routes_gradient_to_the_number():
    x = fb.tensor([1.0, math.nan, 3.0], dtype=fb.float64, requires_grad=True)
    y = fb.tensor([math.nan, 2.0, 1.0], dtype=fb.float64, requires_grad=True)
    fb.fmax(x, y).sum().backward()
    assert np.array_equal(x.grad.numpy(), [1, 0, 1])
    assert np.array_equal(y.grad.numpy(), [0, 1, 0])


def test_sort_gradient_lands_on_the_original_positions():
    x = fb.tensor([3.0, 1.0, 2.0], dtype=fb.float64, requires_grad=True)
    values, _ = fb.sort(x)
    (values * fb.tensor([1.0, 10.0, 100.0], dtype=fb.float64)).sum().backward()
    assert np.array_equal(x.grad.numpy(), [100, 1, 10])

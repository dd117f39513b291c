"""gradcheck and gradgradcheck (float64) for the statistical and cumulative reductions,
with non-contiguous inputs."""
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


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}])
def test_nansum_nanmean(rng, kw):
    x = make(rng, 3, 4, 2)
    with fb.no_grad():
        x[0, 1, 0] = math.nan
    check(lambda t: fb.nansum(t, **kw), x)
    check(lambda t: fb.nanmean(t, **kw), x)


@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": (0, 1), "keepdim": True}, {"dim": 1, "correction": 0},
                                {"dim": -1, "correction": 2}])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(rng, name, kw):
    x = make(rng, 4, 5, noncontig=True)
    check(lambda t: getattr(fb, name)(t, **kw), x)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_std_mean(rng, name):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: getattr(fb, name)(t, 1, keepdim=True), x)
    check(lambda t: getattr(fb, name)(t)[0], x)
    check(lambda t: getattr(fb, name)(t, 0)[1], x)


def test_aminmax(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.aminmax(t, dim=1), x)
    check(lambda t: fb.aminmax(t), x)


def test_median_and_mode(rng):
    x = make(rng, 3, 5, noncontig=True)
    check(lambda t: fb.median(t), x)
    check(lambda t: fb.median(t, 1).values, x)
    check(lambda t: fb.nanmedian(t, 0, keepdim=True).values, x)
    check(lambda t: fb.nanmedian(t), x)
    y = fb.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 5.0, 4.0]], dtype=fb.float64, requires_grad=True)
    y.mode(1).values.sum().backward()
    assert np.array_equal(y.grad.numpy(), [[0, 0, 1, 0], [0, 0, 0, 1]])


def test_median_global_ties_share():
    x = fb.tensor([1.0, 2.0, 2.0, 5.0], dtype=fb.float64, requires_grad=True)
    fb.median(x).backward()  # lower median 2.0 is held by two elements
    assert np.allclose(x.grad.numpy(), [0, 0.5, 0.5, 0])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(rng, interpolation):
    x = make(rng, 3, 6, noncontig=True)
    check(lambda t: fb.quantile(t, 0.3, 1, interpolation=interpolation), x)
    q = fb.tensor([0.2, 0.9], dtype=fb.float64)
    check(lambda t: fb.quantile(t, q, 0, keepdim=True, interpolation=interpolation), x)
    check(lambda t: fb.quantile(t, 0.55, interpolation=interpolation), x)


def test_nanquantile(rng):
    x = make(rng, 3, 6)
    with fb.no_grad():
        x[1, 2] = math.nan
    check(lambda t: fb.nanquantile(t, 0.4, 1), x)


@pytest.mark.parametrize("kw", [{"dim": 1}, {"dim": (0, 1), "keepdim": True}])
def test_logsumexp(rng, kw):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.logsumexp(t, **kw), x)


@pytest.mark.parametrize("p", [2, "fro", 1, 3, 1.5, math.inf, -math.inf])
def test_norm(rng, p):
    x = make(rng, 3, 4, low=0.2, high=1.0, noncontig=True)
    check(lambda t: fb.norm(t, p), x)
    check(lambda t: fb.norm(t, p, 1, keepdim=True), x)


def test_norm_zero_vector_has_zero_gradient():
    x = fb.zeros(3, dtype=fb.float64, requires_grad=True)
    fb.norm(x).backward()
    assert np.array_equal(x.grad.numpy(), np.zeros(3))


@pytest.mark.parametrize("p", [2, 1, 3, math.inf])
def test_dist_broadcast(rng, p):
    x, y = make(rng, 3, 4, noncontig=True), make(rng, 4)
    check(lambda a, b: fb.dist(a, b, p), x, y)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(rng, dim):
    x = make(rng, 3, 4, low=0.5, high=1.5, noncontig=True)
    check(lambda t: fb.cumsum(t, dim), x)
    check(lambda t: fb.cumprod(t, dim), x)


def test_cumprod_with_zeros(rng):
    x = make(rng, 2, 4)
    with fb.no_grad():
        x[0, 1] = 0.0
        x[1, 0] = 0.0
        x[1, 2] = 0.0
    check(lambda t: fb.cumprod(t, 1), x)


def test_cumsum_inplace(rng):
    x = make(rng, 3, 4)
    check(lambda t: t.clone().cumsum_(1), x)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(rng, name):
    x = make(rng, 3, 5, noncontig=True)
    check(lambda t: getattr(fb, name)(t, 1).values, x)
    check(lambda t: getattr(fb, name)(t, 0).values, x)


def test_logcumsumexp(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.logcumsumexp(t, 1), x)
    check(lambda t: fb.logcumsumexp(t, 0), x)


def test_zero_dim_inputs(rng):
    x = make(rng)
    for fn in (lambda t: fb.cumsum(t, 0), lambda t: fb.cumprod(t, 0), lambda t: fb.logcumsumexp(t, 0),
               lambda t: fb.cummax(t, 0).values, lambda t: fb.median(t)):
        check(fn, x)


def test_norm_nuclear(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.norm(t, "nuc"), x, second=False)
    y = make(rng, 2, 3, 4)
    check(lambda t: fb.norm(t, "nuc", (0, 2), keepdim=True), y, second=False)


def test_cumprod_gradient_past_a_tiny_factor_keeps_its_digits():
    # the reverse running sum must not be computed as total - cumsum (it cancelled every digit here)
    s = fb.tensor([1.0, 2.0e-16, 0.17278], dtype=fb.float64, requires_grad=True)
    w = fb.tensor([3.0, 2.0, 1.0], dtype=fb.float64)
    (g,) = fb.autograd.grad((s.cumprod(0) * w).sum(), s)
    # d/ds1 of 3 s0 + 2 s0 s1 + s0 s1 s2 = 2 s0 + s0 s2
    np.testing.assert_allclose(g.numpy(), [3 + 2 * 2e-16 + 2e-16 * 0.17278, 2 + 0.17278, 2e-16], rtol=1e-14)
    (g,) = fb.autograd.grad((s.cumsum(0) * fb.tensor([1e20, 1.0, 1.0], dtype=fb.float64)).sum(), s)
    np.testing.assert_allclose(g.numpy(), [1e20 + 2, 2, 1], rtol=1e-15)

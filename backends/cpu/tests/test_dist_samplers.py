"""The kernels the CPU backend ships for flambeau-distributions' sampling ops (C++, csrc/dist_samplers.cpp),
called directly (the backend's tests do not need that package): their laws, their seeds, the gradient
against scipy, and their value checks."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import flambeau
from flambeau_cpu import _C
from flambeau_cpu.kernels.dist_samplers import dist_binomial, dist_standard_gamma, dist_standard_gamma_grad


def _gamma(alpha, dtype=np.float64, generator=None):
    alpha = np.asarray(alpha, dtype=dtype)
    out = np.empty(alpha.shape, dtype=dtype)
    dist_standard_gamma(alpha, generator, out)
    return out


def _grad(alpha, sample, dtype=np.float64):
    out = np.empty(np.shape(alpha), dtype=dtype)
    dist_standard_gamma_grad(np.asarray(alpha, dtype=dtype), np.asarray(sample, dtype=dtype), out)
    return out


@pytest.mark.parametrize("alpha", [0.01, 0.4, 1.0, 2.5, 30.0, 1e4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_standard_gamma_law_ks(alpha, dtype):
    flambeau.manual_seed(11)
    out = _gamma(np.full(20000, alpha), dtype)
    law = stats.gamma(alpha)
    tiny = np.finfo(dtype).tiny
    # Small alphas put mass below the dtype's tiny, where draws are floored: that mass as a proportion,
    # the draws above it by KS against the law conditioned on exceeding tiny.
    floor_mass = law.cdf(tiny)
    floored = np.mean(out == tiny)
    assert abs(floored - floor_mass) < 5 * np.sqrt(floor_mass * (1 - floor_mass) / out.size) + 1e-12
    above = out[out > tiny].astype(np.float64)
    assert stats.kstest(above, lambda x: (law.cdf(x) - floor_mass) / (1 - floor_mass)).pvalue > 1e-3


def test_standard_gamma_seed_reproduces_and_advances():
    flambeau.manual_seed(3)
    first, second = _gamma(np.full(1000, 0.7)), _gamma(np.full(1000, 0.7))
    flambeau.manual_seed(3)
    np.testing.assert_array_equal(first, _gamma(np.full(1000, 0.7)))
    np.testing.assert_array_equal(second, _gamma(np.full(1000, 0.7)))
    assert not np.array_equal(first, second)
    g = flambeau.Generator().manual_seed(5)
    a = _gamma(np.full(10, 2.0), generator=g)
    np.testing.assert_array_equal(a, _gamma(np.full(10, 2.0), generator=flambeau.Generator().manual_seed(5)))


def test_standard_gamma_independent_of_thread_count():
    alpha = np.linspace(0.1, 20.0, 200_000)
    before = flambeau.get_num_threads()
    try:
        flambeau.set_num_threads(1)
        flambeau.manual_seed(9)
        one = _gamma(alpha)
        flambeau.set_num_threads(2)
        flambeau.manual_seed(9)
        two = _gamma(alpha)
    finally:
        flambeau.set_num_threads(before)
    np.testing.assert_array_equal(one, two)


def test_standard_gamma_edges_follow_pytorch():
    # not positive or NaN: the dtype's smallest normal number (PyTorch's sampler gives the same);
    # infinite: infinity; tiny alphas: floored at tiny, never 0 or NaN
    for dtype in (np.float32, np.float64):
        tiny = np.finfo(dtype).tiny
        out = _gamma([0.0, -1.0, np.nan, np.inf, 1e-30, 1e30 if dtype == np.float32 else 1e300], dtype)
        np.testing.assert_array_equal(out[:3], [tiny, tiny, tiny])
        assert out[3] == np.inf
        assert out[4] >= tiny
        assert np.isfinite(out[5]) and abs(out[5] / (1e30 if dtype == np.float32 else 1e300) - 1) < 1e-6


def test_standard_gamma_strided_and_half_outputs():
    alpha = np.full((40, 2), 3.0)[:, 0]  # strided input
    out = np.empty(80, dtype=np.float64)[::2]  # strided output
    dist_standard_gamma(alpha, None, out)
    assert np.all(out > 0)
    half = np.empty(1000, dtype=np.float16)
    dist_standard_gamma(np.full(1000, 2.0, dtype=np.float16), None, half)
    assert half.dtype == np.float16 and abs(float(half.astype(np.float64).mean()) - 2.0) < 0.3


def _reference_grad(alpha: float, x: float) -> float:
    """-(dP/dalpha) / p by a central difference of scipy's P (left of the mode) or Q (right of it)."""
    h = alpha * 1e-5
    if x < alpha:
        d = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    else:
        d = -(special.gammaincc(alpha + h, x) - special.gammaincc(alpha - h, x)) / (2 * h)
    return -d / stats.gamma(alpha).pdf(x)


QUANTILES = [1e-8, 1e-4, 0.02, 0.3, 0.5, 0.7, 0.98, 1 - 1e-4, 1 - 1e-8]


@pytest.mark.parametrize("alpha", [1e-3, 0.05, 0.5, 0.99, 1.0, 2.5, 7.0, 40.0, 999.0, 1001.0, 1e4])
def test_standard_gamma_grad_against_scipy(alpha):
    xs = np.array([special.gammaincinv(alpha, q) for q in QUANTILES])
    xs = xs[xs > 1e-300]
    ref = np.array([_reference_grad(alpha, x) for x in xs])
    np.testing.assert_allclose(_grad(np.full(xs.shape, alpha), xs), ref, rtol=1e-4)
    xs32 = xs.astype(np.float32)
    ok = xs32 > 0
    ref32 = np.array([_reference_grad(alpha, float(x)) for x in xs32[ok]])
    np.testing.assert_allclose(_grad(np.full(ok.sum(), alpha), xs32[ok], np.float32), ref32, rtol=1e-4)


def test_standard_gamma_grad_methods_agree_at_the_switch():
    # the Temme expansion (alpha > 1000) against the exact series / fraction near its switch point
    for alpha in (1e3, 5e3):
        for q in QUANTILES:
            x = float(special.gammaincinv(alpha, q))
            exact = _C.dist_standard_gamma_grad_scalar(alpha, x, "exact")
            assert abs(_C.dist_standard_gamma_grad_scalar(alpha, x, "asymptotic") / exact - 1) < 1e-7


def test_standard_gamma_grad_vectorised_equals_scalar():
    rng = np.random.default_rng(0)
    alpha = np.exp(rng.uniform(np.log(1e-3), np.log(2e3), 5000))
    x = np.maximum(rng.gamma(alpha), 1e-300)
    scalar = np.array([_C.dist_standard_gamma_grad_scalar(a, v) for a, v in zip(alpha, x)])
    np.testing.assert_allclose(_grad(alpha, x), scalar, rtol=1e-8)


def test_standard_gamma_grad_lanes_keep_each_result_from_its_own_convergence():
    """Eight elements of mixed alpha share a vectorised loop. Each keeps the value from the step its own
    test first passed, as the scalar loop does: the group once ran until all eight passed on the same step,
    which the fraction's ~1e-15 flicker rarely allowed (20k mixed alphas: 3.3 s, off by up to 8e-10)."""
    rng = np.random.default_rng(0)
    alpha = rng.uniform(0.1, 50, 4000)
    x = rng.gamma(alpha)
    scalar = np.array([_C.dist_standard_gamma_grad_scalar(a, v) for a, v in zip(alpha, x)])
    np.testing.assert_allclose(_grad(alpha, x), scalar, rtol=1e-13)  # rescaling schedules differ


def test_standard_gamma_grad_extremes():
    # alpha 1e-30 with its tiny sample: d x / d alpha = -(x / alpha)(log x - psi(1)) to first order
    x = 1e-30
    assert abs(_grad([1e-30], [x])[0] / (-(x / 1e-30) * (np.log(x) + np.euler_gamma)) - 1) < 1e-6
    # huge alpha: d x / d alpha -> x / alpha at the median region
    assert abs(_grad([1e30], [1e30])[0] - 1.0) < 1e-6
    out = _grad([0.0, -1.0, np.nan, np.inf, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 0.0, np.inf, np.nan])
    assert np.isnan(out[[0, 1, 2, 3, 5, 6]]).all() and out[4] == 0.0


def test_standard_gamma_grad_is_the_implicit_derivative():
    # d x / d alpha at fixed CDF value: the quantile function's derivative, by a difference of gammaincinv
    for alpha, q in [(0.3, 0.4), (3.0, 0.9), (50.0, 0.01)]:
        h = 1e-6 * alpha
        numeric = (special.gammaincinv(alpha + h, q) - special.gammaincinv(alpha - h, q)) / (2 * h)
        x = special.gammaincinv(alpha, q)
        assert abs(_grad([alpha], [x])[0] / numeric - 1) < 1e-5


def test_size_and_dtype_checks_in_cpp():
    with pytest.raises(ValueError, match="number of elements"):
        _C.dist_standard_gamma(np.ones(3), np.empty(4), 1, 0)
    with pytest.raises(ValueError, match="wrong dtype"):
        _C.dist_standard_gamma_grad(np.ones(3, np.float32), np.ones(3), np.empty(3))
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.dist_standard_gamma(np.ones(3), np.empty(6)[::2], 1, 0)
    with pytest.raises(ValueError, match="bad count"):
        _C.dist_binomial(np.array([-1.0]), np.array([0.5]), np.empty(1), 1, 0)


@pytest.mark.parametrize("count,prob", [(12, 0.25), (5, 0.9), (1000, 0.3), (200, 0.97), (10 ** 6, 0.5), (40, 1e-4)])
def test_binomial_law_chi_square(count, prob):
    flambeau.manual_seed(21)
    out = np.empty(20000, dtype=np.float64)
    dist_binomial(np.full(20000, float(count)), np.full(20000, prob), None, out)
    assert np.all(out == np.floor(out)) and out.min() >= 0 and out.max() <= count
    law = stats.binom(count, prob)
    lo, hi = int(law.ppf(1e-4)), int(law.ppf(1 - 1e-4))
    edges = np.unique(np.linspace(lo, hi + 1, 30).astype(int))
    observed = np.histogram(out, bins=np.concatenate(([-np.inf], edges[1:-1] - 0.5, [np.inf])))[0]
    cdf = law.cdf(edges[1:-1] - 1)
    expected = np.diff(np.concatenate(([0.0], cdf, [1.0]))) * out.size
    keep = expected > 5
    observed, expected = observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_binomial_edges_seed_and_checks():
    out = np.empty(5, dtype=np.float32)
    dist_binomial(np.array([0.0, 7.0, 7.0, 7.9, 2.0 ** 52]), np.array([0.3, 0.0, 1.0, 1.0, 0.0]), None, out)
    np.testing.assert_array_equal(out, [0, 0, 7, 7, 0])
    flambeau.manual_seed(4)
    a = np.empty(100)
    dist_binomial(np.array(50.0), np.full(100, 0.5), None, a)  # broadcast count
    flambeau.manual_seed(4)
    b = np.empty(100)
    dist_binomial(np.array(50.0), np.full(100, 0.5), None, b)
    np.testing.assert_array_equal(a, b)
    for count, prob, message in [(-1.0, 0.5, "count must be finite and non-negative"),
                                 (np.inf, 0.5, "count must be finite and non-negative"),
                                 (3.0, 1.5, r"prob must be in \[0, 1\]"), (3.0, np.nan, r"prob must be in \[0, 1\]")]:
        with pytest.raises(RuntimeError, match=message):
            dist_binomial(np.array([count]), np.array([prob]), None, np.empty(1))


def _chi_square_pvalue(out: np.ndarray, law) -> float:
    """Chi-square of integer draws against a discrete law, bins merged to expected counts above 5."""
    lo, hi = int(law.ppf(1e-4)), int(law.ppf(1 - 1e-4))
    edges = np.unique(np.linspace(lo, hi + 1, 30).astype(np.int64))
    inner = edges[1:-1]
    observed = np.histogram(out, bins=np.concatenate(([-np.inf], inner - 0.5, [np.inf])))[0]
    expected = np.diff(np.concatenate(([0.0], law.cdf(inner - 1), [1.0]))) * out.size
    keep = expected > 5
    observed, expected = observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("rate", [0.3, 4.0, 9.99, 10.0, 37.5, 1e4, 1e9])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_poisson_law_chi_square(rate, dtype):
    from flambeau_cpu.kernels.dist_samplers import dist_poisson

    flambeau.manual_seed(17)
    out = np.empty(20000, dtype=np.float64)
    dist_poisson(np.full(20000, rate, dtype=dtype), None, out)
    assert np.all(out == np.floor(out)) and out.min() >= 0
    assert _chi_square_pvalue(out, stats.poisson(rate)) > 1e-3


def test_poisson_edges_seed_and_checks():
    from flambeau_cpu.kernels.dist_samplers import dist_poisson

    out = np.empty(3)
    dist_poisson(np.array([0.0, np.inf, 1e20]), None, out)
    np.testing.assert_array_equal(out, [0.0, -2.0 ** 63, -2.0 ** 63])  # PyTorch's int64 overflow value
    flambeau.manual_seed(8)
    a = np.empty(500)
    dist_poisson(np.full(500, 12.0), None, a)
    flambeau.manual_seed(8)
    b = np.empty(500)
    dist_poisson(np.full(500, 12.0), None, b)
    np.testing.assert_array_equal(a, b)
    for bad in (-1.0, np.nan):
        with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
            dist_poisson(np.array([1.0, bad]), None, np.empty(2))
    with pytest.raises(ValueError, match="bad rate"):
        _C.dist_poisson(np.array([-1.0]), np.empty(1), 1, 0)

"""The kernels the CPU backend ships for flambeau-distributions' sampling ops, called directly (the
backend's tests do not need that package): their laws, their seeds, and their value checks."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import flambeau
from flambeau_cpu.kernels.dist_samplers import dist_binomial, dist_standard_gamma


def test_standard_gamma_law_and_seed():
    alpha = np.full(20000, 0.4)
    out = np.empty(20000, dtype=np.float64)
    flambeau.manual_seed(3)
    dist_standard_gamma(alpha, None, out)
    assert stats.kstest(out, stats.gamma(0.4).cdf).pvalue > 1e-3
    again = np.empty_like(out)
    flambeau.manual_seed(3)
    dist_standard_gamma(alpha, None, again)
    np.testing.assert_array_equal(out, again)


def test_standard_gamma_invalid_concentration_gives_nan_and_tiny_floor():
    out = np.empty(4, dtype=np.float32)
    dist_standard_gamma(np.array([0.0, -1.0, np.nan, 1e-4]), None, out)
    assert np.isnan(out[:3]).all()
    assert out[3] >= np.finfo(np.float32).tiny


def test_binomial_law_and_checks():
    out = np.empty(20000, dtype=np.float32)
    dist_binomial(np.full(20000, 12.0), np.full(20000, 0.25), None, out)
    assert abs(out.mean() - 3.0) < 5 * np.sqrt(12 * 0.25 * 0.75 / 20000)
    for count, prob, message in [(-1.0, 0.5, "count must be finite and non-negative"),
                                 (np.inf, 0.5, "count must be finite and non-negative"),
                                 (3.0, 1.5, r"prob must be in \[0, 1\]"), (3.0, np.nan, r"prob must be in \[0, 1\]")]:
        with pytest.raises(RuntimeError, match=message):
            dist_binomial(np.array([count]), np.array([prob]), None, np.empty(1))

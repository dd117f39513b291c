"""The composite of ``dist_standard_gamma_grad`` (series, continued fraction, uniform expansion on
elementwise ops) against the CPU kernel and scipy, and the tiers it leaves the gamma ops in."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import flambeau as fb
from flambeau.distributions import _samplers
from flambeau.ops import fn


def _reference(alpha, x):
    """-(dP/dalpha) / p by a central difference of scipy's regularised incomplete gamma function."""
    h = 1e-6 * alpha
    dp = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    return -dp / stats.gamma(alpha).pdf(x)


def _grid():
    rng = np.random.default_rng(4)
    alpha = np.exp(rng.uniform(np.log(0.01), np.log(5e4), 600))
    x = stats.gamma(alpha).ppf(rng.uniform(0.01, 0.99, 600))  # the samples' own range
    return alpha, x


@pytest.mark.parametrize("dtype", [fb.float64, fb.float32])
def test_formula_matches_kernel_and_scipy(dtype):
    alpha, x = _grid()
    a, s = fb.tensor(alpha).to(dtype), fb.tensor(x).to(dtype)
    got = _samplers.standard_gamma_grad(a, s)
    assert got.dtype == dtype and tuple(got.shape) == (600,)
    got = got.numpy().astype(np.float64)
    kernel = np.concatenate([fn.dist_standard_gamma_grad(a[i:i + 1], s[i:i + 1]).numpy() for i in range(600)])
    rtol = 1e-12 if dtype == fb.float64 else 1e-5
    np.testing.assert_allclose(got, kernel.astype(np.float64), rtol=rtol)
    small = alpha < 1e3  # scipy's difference is good to ~1e-6 there; the expansion is O(alpha^-2) past it
    a64, x64 = a.to(fb.float64).numpy(), s.to(fb.float64).numpy()
    np.testing.assert_allclose(got[small], _reference(a64[small], x64[small]), rtol=2e-5 if dtype == fb.float64
                               else 2e-4)


def test_edges_and_layouts():
    alpha = fb.tensor([0.0, -1.0, np.nan, np.inf, 2.0, 2.0, 2.0, 2.0], dtype=fb.float64)
    x = fb.tensor([1.0, 1.0, 1.0, 1.0, 0.0, np.inf, np.nan, -1.0], dtype=fb.float64)
    got = _samplers.standard_gamma_grad(alpha, x).numpy()
    np.testing.assert_array_equal(got, fn.dist_standard_gamma_grad(alpha, x).numpy())
    a = fb.tensor(np.full((3, 4), 2.5)).t()  # non-contiguous, 2-d
    s = fb.tensor(np.linspace(0.5, 6.0, 12).reshape(4, 3))
    np.testing.assert_allclose(_samplers.standard_gamma_grad(a, s).numpy(),
                               _reference(2.5, s.numpy()), rtol=2e-5)
    assert tuple(_samplers.standard_gamma_grad(fb.zeros((0,), dtype=fb.float64),
                                               fb.zeros((0,), dtype=fb.float64)).shape) == (0,)


def test_gamma_ops_run_on_the_core_tier():
    # no incomplete gamma function left in the composites: a backend with the core tier runs them
    from flambeau.ops import tiers

    of = tiers()
    for name in ("dist_standard_gamma", "dist_standard_gamma_grad", "dist_poisson"):
        assert of[name] in ("decomposed", "host"), (name, of[name])

"""erfc's and lgamma's decompositions onto the core tier, against scipy within their documented bounds
(flambeau._core_ops.decomp.special)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS

special = pytest.importorskip("scipy.special")


def _decomposed(name, *args):
    op = OPS[name]
    full = args + tuple(p.default for p in op.parameters[len(args):])
    return _without_kernel(op, fb.device("cpu"), full, None, False)


@pytest.mark.parametrize("dtype, rtol, tiny", [
    ("float64", 3e-12, 1e-300),
    ("float32", 1.6e-5, 1e-37),  # out to the underflow; 2.2e-6 below x = 4 (next test)
])
def test_erfc_is_relatively_accurate_out_to_the_underflow(dtype, rtol, tiny):
    x = np.linspace(-30, 30, 60001).astype(dtype)
    got = _decomposed("erfc", fb.from_numpy(x)).numpy()
    assert got.dtype == np.dtype(dtype)
    want = special.erfc(x.astype(np.float64))
    kept = want > tiny
    np.testing.assert_allclose(got[kept], want[kept], rtol=rtol, atol=0)
    assert np.all(np.abs(got[~kept]) <= tiny * 10)


def test_erfc_float32_near_the_switch_and_in_the_tail():
    x = np.linspace(-4, 4, 8001).astype(np.float32)
    got = _decomposed("erfc", fb.from_numpy(x)).numpy().astype(np.float64)
    np.testing.assert_allclose(got, special.erfc(x.astype(np.float64)), rtol=2.2e-6, atol=0)


def test_erfc_special_values_and_dtypes():
    x = fb.tensor([np.inf, -np.inf, np.nan, 0.0, -0.0], dtype=fb.float64)
    got = _decomposed("erfc", x).numpy()
    np.testing.assert_array_equal(got, [0.0, 2.0, np.nan, 1.0, 1.0])
    for dt in (fb.float16, fb.bfloat16, fb.int64, fb.bool):
        t = fb.tensor([-2, 0, 1, 3]).to(dt)
        got, want = _decomposed("erfc", t), fb.erfc(t)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.to(fb.float64).numpy(), want.to(fb.float64).numpy(), rtol=1e-2)


def test_erfc_decomposition_is_differentiable():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.tensor([-2.5, -0.3, 0.2, 0.7, 2.0, 3.5, 6.0], dtype=fb.float64, requires_grad=True)
    _decomposed("erfc", x).sum().backward()
    want = -2 / np.sqrt(np.pi) * np.exp(-x.detach().numpy() ** 2)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-9, atol=1e-300)


def test_erfc_is_decomposed_not_extended():
    assert OPS["erfc"].composite is not None
    assert fb.ops.manifest()["ops"]["erfc"]["tier"] == "decomposed"
    assert not OPS["erfc"].host


def test_lgamma_decomposition_against_scipy_in_every_float_dtype():
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-4.5, 6, 2001), np.linspace(-40, 40, 1001), [1.0, 2.0, 1e-30, 1e10, 3e36]])
    for dtype, tol in ((np.float64, 1e-13), (np.float32, 1e-5), (np.float16, 5e-3)):
        with np.errstate(over="ignore"):  # 1e10 and 3e36 past float16's range
            exact = x.astype(dtype)
        exact = exact[np.isfinite(exact)]
        got = _without_kernel(OPS["lgamma"], fb.device("cpu"), (fb.from_numpy(exact),), None, False)
        assert got.dtype == fb.from_numpy(exact).dtype
        want = special.gammaln(exact.astype(np.float64))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got.numpy().astype(np.float64)[finite], want[finite], rtol=tol, atol=tol)
    poles = fb.tensor([0.0, -0.0, -1.0, -7.0, math.inf, -math.inf, math.nan], dtype=fb.float64)
    got = _without_kernel(OPS["lgamma"], fb.device("cpu"), (poles,), None, False).numpy()
    np.testing.assert_array_equal(got, [math.inf] * 6 + [math.nan])  # PyTorch: +inf at -inf too


def test_lgamma_decomposition_gradient_is_digamma():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.tensor([0.3, 1.5, 4.0, 12.0, -2.5], dtype=fb.float64, requires_grad=True)
    assert fb.autograd.gradcheck(lambda t: _without_kernel(OPS["lgamma"], fb.device("cpu"), (t,), None, False), (x,))

"""The formula decompositions of special functions and comparisons against the CPU kernels, on
special values (0, +-inf, NaN, the far tails), every float dtype and integer inputs."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS

VALUES = [-40.0, -8.0, -3.0, -1.0, -0.5, -0.0, 0.0, 1e-30, 1e-8, 0.25, 0.5, 0.99, 1.0, 2.0, 7.5, 40.0,
          np.inf, -np.inf, np.nan]


def _decomposed(name, *args):
    op = OPS[name]
    full = args + tuple(p.default for p in op.parameters[len(args):])
    return _without_kernel(op, fb.device("cpu"), full, None, False)


def _check(name, *args, rtol):
    want = fb.ops.function(name)(*args)
    got = _decomposed(name, *args)
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.to(fb.float64).numpy() if got.dtype != fb.bool else got.numpy(),
                               want.to(fb.float64).numpy() if want.dtype != fb.bool else want.numpy(),
                               rtol=rtol, atol=0, equal_nan=True)


RTOL = {fb.float64: 1e-12, fb.float32: 3e-6, fb.float16: 1e-3, fb.bfloat16: 8e-3}


@pytest.mark.parametrize("name", ["special_ndtr", "sinc", "special_entr", "logit"])
@pytest.mark.parametrize("dtype", [fb.float64, fb.float32, fb.float16, fb.bfloat16])
def test_unary(name, dtype):
    x = fb.tensor(VALUES, dtype=fb.float64).to(dtype)
    rtol = RTOL[dtype] * (50 if name == "special_ndtr" and dtype == fb.float64 else 1)  # 1 - erf below 3
    _check(name, x, rtol=rtol)
    _check(name, fb.tensor([-2, 0, 1, 3]), rtol=1e-6)


def test_logit_with_eps_and_ldexp_float_power():
    x = fb.tensor(VALUES, dtype=fb.float64)
    _check("logit", x, 1e-3, rtol=1e-12)
    _check("ldexp", fb.tensor([1.0, -3.0, 0.5, np.inf]), fb.tensor([10, -2, 0, 1]), rtol=0)
    _check("float_power", fb.tensor([2, 3, -4]), fb.tensor([0.5, -1.0, 2.0]), rtol=1e-15)
    _check("float_power", 2, fb.tensor([0.5, 3.0]), rtol=1e-15)
    _check("float_power", fb.tensor([1 + 1j, 2.0]), 2, rtol=1e-15)


def test_xlog1py_zero_rule():
    x = fb.tensor([0.0, 0.0, 2.0, -1.0, np.nan, 0.0])
    y = fb.tensor([np.nan, -1.0, 0.5, np.inf, 1.0, 3.0])
    _check("special_xlog1py", x, y, rtol=1e-6)
    _check("special_xlog1py", 0.0, y, rtol=1e-6)
    _check("special_xlog1py", x, 2.0, rtol=1e-6)


@pytest.mark.parametrize("dtype", [fb.float64, fb.float32, fb.float16, fb.int64, fb.bool])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_equal(dtype, equal_nan):
    a = fb.tensor([1.0, 1.0, np.inf, np.inf, np.nan, 0.0, 100.0, 1e-9], dtype=fb.float64)
    b = fb.tensor([1.0 + 1e-6, 1.1, np.inf, -np.inf, np.nan, 1e-9, 100.001, 0.0], dtype=fb.float64)
    a, b = a.nan_to_num(0.0).to(dtype) if dtype in (fb.int64, fb.bool) else a.to(dtype), \
        b.nan_to_num(0.0).to(dtype) if dtype in (fb.int64, fb.bool) else b.to(dtype)
    for kw in ({}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 0.1, "atol": 1e-3}):
        args = (a, b, kw.get("rtol", 1e-5), kw.get("atol", 1e-8), equal_nan)
        _check("isclose", *args, rtol=0)
        _check("allclose", *args, rtol=0)
        _check("allclose", a[:1], b[:1], *args[2:], rtol=0)
    _check("equal", a, b, rtol=0)
    _check("equal", a, a.clone(), rtol=0)
    _check("equal", a, a[:3], rtol=0)


@pytest.mark.parametrize("weights", [None, [0.5, 1.0, 1.0, 2.0], "float16", "int"])
@pytest.mark.parametrize("minlength", [0, 8])
def test_bincount(weights, minlength):
    x = fb.tensor([0, 2, 2, 5])
    w = None
    if weights == "float16":
        w = fb.tensor([0.5, 1.0, 1.0, 2.0], dtype=fb.float16)
    elif weights == "int":
        w = fb.tensor([1, 2, 3, 4])
    elif weights is not None:
        w = fb.tensor(weights)
    got, want = _decomposed("bincount", x, w, minlength), fb.bincount(x, w, minlength)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(_decomposed("bincount", fb.tensor([], dtype=fb.int64), None, 3).numpy(), [0, 0, 0])
    with pytest.raises(RuntimeError, match="non-negative"):
        _decomposed("bincount", fb.tensor([1, -1]), None, 0)


@pytest.mark.parametrize("values", [[3.0, 1.0, 2.0, 4.0], [1.0, np.nan, 3.0, 2.0], [np.nan], [5.0], [2.0, 2.0, 1.0]])
def test_median_and_nanmedian(values):
    for name in ("median", "nanmedian"):
        x = fb.tensor(values)
        _check(name, x, rtol=0)
    _check("median", fb.tensor([[3, 1], [2, 9]], dtype=fb.int32), rtol=0)

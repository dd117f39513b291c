"""``x ** e`` for a float32/float64 tensor and a Python-number exponent PyTorch computes without pow
(2, 3, -2, 0.5, -0.5, -1, 1, 0): the results are PyTorch's forms bit for bit (x * x, (x * x) * x,
1 / (x * x), sqrt, 1 / sqrt, 1 / x, x, 1), special values included, at sizes on both sides of the
C++ threshold, on strided views, in place and with out=; other dtypes and exponents keep pow."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

fb = pytest.importorskip("flambeau")
from flambeau_cpu.kernels import native  # noqa: E402

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, -2.5, 1e-30, -1e30, 3e38, 1e-45]


def _form(x: np.ndarray, e: float) -> np.ndarray:
    """PyTorch's result for ``x ** e`` (aten's pow_tensor_scalar kernels), computed in x's dtype."""
    one = x.dtype.type(1)
    with np.errstate(all="ignore"):
        return {2: lambda: x * x, 3: lambda: (x * x) * x, -2: lambda: one / (x * x), 0.5: lambda: np.sqrt(x),
                -0.5: lambda: one / np.sqrt(x), -1: lambda: one / x, 1: lambda: x.copy(),
                0: lambda: np.ones_like(x)}[e]()


def _values(dtype, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    x[: len(SPECIALS)] = np.array(SPECIALS, dtype)  # n is never smaller
    return x


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit (NaN's sign aside), so that -0 and +0 differ."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))


EXPONENTS = [2, 3, -2, 0.5, -0.5, -1, 1, 0]


@pytest.mark.parametrize("n", [40, native.GRAIN + 5])  # numpy's loops, then the C++ multiply
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", EXPONENTS)
def test_forms_bit_for_bit(e, dtype, n):
    x = _values(dtype, n)
    _same((fb.from_numpy(x) ** e).numpy(), _form(x, e))
    _same(fb.pow(fb.from_numpy(x), float(e)).numpy(), _form(x, e))  # 2.0 as 2


def test_where_pow_itself_differs():
    """The cases that tell the forms from pow: sqrt's -0 and NaN, and x ** 3 rounded twice."""
    x = np.array([-0.0, -np.inf], np.float32)
    got = (fb.from_numpy(x) ** 0.5).numpy()
    assert got[0] == 0 and np.signbit(got[0]) and np.isnan(got[1])  # pow would give +0 and inf
    y = np.random.default_rng(1).uniform(0.5, 2, 100_000).astype(np.float32)
    twice = (y * y) * y
    assert np.any(np.power(y, np.float32(3)) != twice)  # so the next line checks the order
    _same((fb.from_numpy(y) ** 3).numpy(), twice)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(EXPONENTS), st.sampled_from([np.float32, np.float64]).flatmap(
    lambda dt: arrays(dt, st.integers(0, 50), elements=st.floats(width=32 if dt == np.float32 else 64))))
def test_any_values(e, x):
    _same((fb.from_numpy(x) ** e).numpy(), _form(x, e))


@pytest.mark.parametrize("e", [2, 3, -2, -0.5])
def test_in_place_out_and_strided(e):
    x = _values(np.float32, 3 * (native.GRAIN + 7), seed=2)
    t = fb.from_numpy(x.copy())
    t.pow_(e)
    _same(t.numpy(), _form(x, e))
    view = fb.from_numpy(x.copy())[::3]
    _same((view ** e).numpy(), _form(x[::3], e))
    out = fb.empty(view.shape)
    fb.pow(view, e, out=out)
    _same(out.numpy(), _form(x[::3], e))


def test_other_dtypes_and_exponents_keep_pow():
    ints = np.arange(-50, 50, dtype=np.int32)
    np.testing.assert_array_equal((fb.from_numpy(ints) ** 2).numpy(), ints * ints)
    assert (fb.from_numpy(ints) ** 2.0).dtype == fb.float32  # promoted: pow on the converted values
    np.testing.assert_array_equal((fb.from_numpy(ints) ** 2.0).numpy(), np.power(ints.astype(np.float32), 2))
    x = _values(np.float32, 1000)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((fb.from_numpy(x) ** 2.5).numpy(), np.power(x, np.float32(2.5)))
        exponent = np.full(1000, 2.0, np.float32)
        np.testing.assert_array_equal((fb.from_numpy(x) ** fb.from_numpy(exponent)).numpy(), np.power(x, exponent))
    assert (fb.from_numpy(x) ** 2).dtype == fb.float32 and (fb.from_numpy(x) ** True).dtype == fb.float32


@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1])
def test_gradient_unchanged(e):
    ag = pytest.importorskip("flambeau.autograd")
    x = fb.from_numpy(np.random.default_rng(4).uniform(0.5, 2.0, 7)).requires_grad_()
    assert ag.gradcheck(lambda t: t ** e, (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_torch(dtype):
    torch = pytest.importorskip("torch")
    x = _values(dtype, native.GRAIN + 9, seed=5)
    for e in EXPONENTS:
        got, want = (fb.from_numpy(x) ** e).numpy(), (torch.from_numpy(x) ** e).numpy()
        if e == 0.5:
            # torch 2.13's vectorised x ** 0.5 is not sqrt: ~4% of its results are 1 ulp off the correctly
            # rounded square root, which flambeau gives; the special values agree (-0 -> -0, -inf -> nan)
            nan = np.isnan(want)
            np.testing.assert_array_equal(np.isnan(got), nan)
            np.testing.assert_array_max_ulp(got[~nan], want[~nan], maxulp=1)
            _same(got[np.isin(x, SPECIALS) & ~nan], want[np.isin(x, SPECIALS) & ~nan])
        else:
            _same(got, want)

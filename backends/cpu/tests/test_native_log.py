"""The vectorised log (vecmath.h's vec_log, behind ``_C.unary`` and the CPU backend's ``log`` kernel):
ulp error against a wider reference over each precision's whole range, subnormals, values next to 1,
libm's special values bit for bit, strided views, ``out=`` and in-place use through flambeau."""
from __future__ import annotations

import numpy as np
import pytest
from _arrays import layouts, make
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

fb = pytest.importorskip("flambeau")  # loads the backend first (its kernels import flambeau's ops)
from flambeau_cpu import _C  # noqa: E402
from flambeau_cpu.kernels import native  # noqa: E402

_LOG = _C.UNARY_OPS["log"]
_WIDE = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None  # x86's 80-bit long double


def _log(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    assert _C.unary(_LOG, x, out) is True
    return out


def _reference(x: np.ndarray):
    """log(x) one precision wider than x (float64 for float32, long double for float64)."""
    wide = np.float64 if x.dtype == np.float32 else _WIDE
    with np.errstate(all="ignore"):
        return np.log(x.astype(wide))


def _ulp_error(got: np.ndarray, x: np.ndarray) -> float:
    """The largest |got - log(x)| in units of the last place of the correctly rounded result (for
    finite positive x; the unit of a zero result is the dtype's smallest normal spacing at 1)."""
    ref = _reference(x)
    rounded = ref.astype(x.dtype)
    unit = np.spacing(np.abs(rounded)).astype(ref.dtype)
    return float(np.max(np.abs(got.astype(ref.dtype) - ref) / unit)) if x.size else 0.0


def _sweep(dtype) -> np.ndarray:
    """Positive finite values over the whole exponent range (subnormals included), and every value
    within a few thousand ulps of 1 on both sides, where log's result is tiny."""
    info = np.finfo(dtype)
    bits = np.int32 if dtype == np.float32 else np.int64
    top = np.array(info.max, dtype).view(bits)
    steps = np.linspace(1, int(top), 1_500_001).astype(bits)  # uniform in the bit pattern
    spread = np.minimum(steps, top).view(dtype)  # (int64 -> float64 -> int64 may round past max)
    one = np.array(1, dtype).view(bits)
    near_one = (one + np.arange(-4000, 4001, dtype=bits)).view(dtype)
    edges = np.array([info.tiny, np.nextafter(info.tiny, dtype(0)), info.smallest_subnormal, info.max, 2.0, 0.5,
                      np.sqrt(2), np.sqrt(0.5), np.e], dtype)
    return np.concatenate([spread, near_one, edges])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_within_one_ulp_over_the_whole_range(dtype):
    if dtype == np.float64 and _WIDE is None:
        pytest.skip("no long double wider than float64 on this platform")
    x = _sweep(dtype)
    assert _ulp_error(_log(x), x) <= 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_are_libms(dtype):
    info = np.finfo(dtype)
    x = np.array([0.0, -0.0, -1.0, -info.smallest_subnormal, -np.inf, np.inf, np.nan, 1.0, info.smallest_subnormal],
                 dtype)
    got = _log(x)
    assert got[0] == -np.inf and got[1] == -np.inf
    assert np.all(np.isnan(got[2:5])) and got[5] == np.inf and np.isnan(got[6])
    assert got[7] == 0 and not np.signbit(got[7])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.log(x))  # what numpy (libm) gives, bit for bit here


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([np.float32, np.float64]).flatmap(
    lambda dt: arrays(dt, st.integers(0, 300), elements=st.floats(width=32 if dt == np.float32 else 64))))
def test_any_input_within_one_ulp_and_specials_exact(x):
    got = _log(x)
    positive = np.isfinite(x) & (x > 0)
    if x.dtype == np.float32 or _WIDE is not None:
        assert _ulp_error(got[positive], x[positive]) <= 1.0
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[~positive], np.log(x[~positive]))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.float32, np.float64]), st.lists(st.integers(0, 7), min_size=1, max_size=3).map(tuple),
       st.data())
def test_strided_views_within_one_ulp(dtype, shape, data):
    # (not bit for bit with the contiguous loop: that one is compiled per CPU generation, with FMA)
    if dtype == np.float64 and _WIDE is None:
        pytest.skip("no long double wider than float64 on this platform")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = make(rng, shape, dtype, data.draw(layouts(shape)), specials=True, positive=True)
    got = _log(x)
    positive = np.isfinite(x) & (x > 0)
    assert _ulp_error(got[positive], x[positive]) <= 1.0
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[~positive], np.log(x[~positive]))


def test_the_backend_runs_it_for_large_float_tensors(monkeypatch):
    """The CPU backend's log kernel takes the C++ path (not numpy's) for float32 and float64 from one thread."""
    calls = []
    real = native._unary
    monkeypatch.setattr(native, "_unary", lambda *a: calls.append(a[1].dtype) or real(*a))
    for dtype in (np.float32, np.float64):
        x = np.linspace(0.1, 10, native.GRAIN, dtype=dtype)
        out = np.empty_like(x)
        native.KERNELS["log"](x, out)
        np.testing.assert_array_equal(out, _log(x))
    assert calls == [np.float32, np.float64]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_through_flambeau_out_and_in_place(dtype):
    rng = np.random.default_rng(3)
    base = np.abs(rng.standard_normal((300, 400))).astype(dtype) + 1e-3
    t = fb.from_numpy(base.copy())
    view = t[:, ::3].t()  # non-contiguous: (134, 300)
    expected = _reference(base[:, ::3].T).astype(dtype)
    assert _ulp_error(fb.log(view).numpy(), np.ascontiguousarray(base[:, ::3].T)) <= 1.0
    out = fb.empty(view.shape, dtype=getattr(fb, dtype))
    fb.log(view, out=out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=np.finfo(dtype).eps)
    whole = fb.from_numpy(base.copy())
    whole.log_()
    assert _ulp_error(whole.numpy(), base) <= 1.0

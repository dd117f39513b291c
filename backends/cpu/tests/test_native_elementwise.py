"""The C++ pointwise kernels (flambeau_cpu._C.binary / unary) against numpy, over dtypes and layouts."""
from __future__ import annotations

import math

import numpy as np
import pytest
from _arrays import FLOATS, fill, layouts, make, view_of
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from flambeau_cpu import _C

ARITH = ("add", "sub", "mul", "div", "maximum", "minimum")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
NUMPY_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "maximum": np.maximum,
    "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


UNARY_REFERENCE = {  # computed in float64, then rounded to the tested dtype
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "neg": np.negative, "abs": np.abs, "sigmoid": _sigmoid,
    "tanh": np.tanh, "erf": _erf, "erfc": _erfc,
}
TOLERANCE = {np.float32: dict(rtol=4e-6, atol=1e-37), np.float64: dict(rtol=1e-13, atol=1e-300)}


def _out_array(rng, shape, dtype, layout):
    """out, plus its base and a snapshot of the base (to check nothing outside out was written)."""
    if layout is None:
        out = np.full(shape, 7, dtype)
        return out, out, out.copy()
    base = fill(rng, layout[0], dtype, specials=False)
    return view_of(base, layout), base, base.copy()


@st.composite
def binary_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    op = draw(st.sampled_from(ARITH + COMPARE))
    bshapes = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=5))
    (sa, sb), so = bshapes.input_shapes, bshapes.result_shape
    layout = lambda shape: draw(st.one_of(st.none(), layouts(shape)))  # noqa: E731
    scalar = draw(st.sampled_from((None, None, 2.5, -3, 0.0, float("nan"), 1e300)))
    alpha = draw(st.sampled_from((1, 1, 2, -0.5))) if op in ("add", "sub") else 1
    return dtype, op, sa, sb, so, layout(sa), layout(sb), layout(so), scalar, alpha, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=250, deadline=None)
@given(binary_cases())
def test_binary_matches_numpy(case):
    dtype, op, sa, sb, so, la, lb, lo, scalar, alpha, seed = case
    rng = np.random.default_rng(seed)
    a = make(rng, sa, dtype, la, specials=True)
    b = make(rng, sb, dtype, lb, specials=True) if scalar is None else scalar
    out_dtype = np.bool_ if op in COMPARE else dtype
    out, base, before = _out_array(rng, so, out_dtype, lo)
    with np.errstate(all="ignore"):
        bb = b if scalar is None else dtype(scalar)  # a Python scalar takes the tensor's dtype
        if alpha != 1:
            bb = np.multiply(bb, dtype(alpha))
        expected = NUMPY_BINARY[op](a, bb)
        assert _C.binary(_C.BINARY_OPS[op], a, b, out, alpha) is True
    expected = np.broadcast_to(expected, so)
    if alpha != 1:  # a + alpha*b may be a fused multiply-add: within an ulp of |a| + |alpha*b|
        with np.errstate(all="ignore"):
            scale = np.broadcast_to(np.abs(a) + np.abs(bb), so)
        finite = np.isfinite(scale)
        np.testing.assert_array_equal(out[~finite], expected[~finite])
        error = np.abs(out[finite].astype(np.float64) - expected[finite])
        assert np.all(error <= 2 * np.finfo(dtype).eps * scale[finite])
    else:
        np.testing.assert_array_equal(out, expected)
    if lo is not None:  # nothing outside out's elements changed
        mask = np.ones(base.shape, bool)
        view_of(mask, lo)[...] = False
        np.testing.assert_array_equal(base[mask], before[mask])


@st.composite
def unary_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    op = draw(st.sampled_from(tuple(UNARY_REFERENCE)))
    shape = draw(st.lists(st.integers(0, 6), min_size=0, max_size=4).map(tuple))
    return (dtype, op, shape, draw(st.one_of(st.none(), layouts(shape))), draw(st.one_of(st.none(), layouts(shape))),
            draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=250, deadline=None)
@given(unary_cases())
def test_unary_matches_numpy(case):
    dtype, op, shape, la, lo, seed = case
    rng = np.random.default_rng(seed)
    a = make(rng, shape, dtype, la, specials=True)
    out, base, before = _out_array(rng, shape, dtype, lo)
    with np.errstate(all="ignore"):
        expected = UNARY_REFERENCE[op](a.astype(np.float64)).astype(dtype)
    assert _C.unary(_C.UNARY_OPS[op], a, out) is True
    np.testing.assert_allclose(out, expected, equal_nan=True, **TOLERANCE[dtype])
    if lo is not None:
        mask = np.ones(base.shape, bool)
        view_of(mask, lo)[...] = False
        np.testing.assert_array_equal(base[mask], before[mask])


def test_exp_float32_over_its_whole_range():
    """The vectorised float32 exp: within 2 ulp everywhere, right at overflow, underflow and NaN."""
    x = np.concatenate([np.linspace(-110, 95, 2_000_003, dtype=np.float32),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.72284, -103.97207, -104.0],
                                 np.float32)])
    out = np.empty_like(x)
    _C.unary(_C.UNARY_OPS["exp"], x, out)
    with np.errstate(all="ignore"):
        ref = np.exp(x.astype(np.float64))
        ref32 = ref.astype(np.float32)
    normal = (ref32 > np.finfo(np.float32).tiny) & np.isfinite(ref32)
    ulp = np.spacing(ref32[normal])
    assert np.max(np.abs(out[normal] - ref[normal]) / ulp) <= 2.0
    tiny = (ref32 <= np.finfo(np.float32).tiny) & (ref > 0)  # subnormal results: within one subnormal step
    assert np.max(np.abs(out[tiny] - ref[tiny])) <= 2 * 1.5e-45
    assert np.array_equal(np.isinf(out), np.isinf(ref32))
    assert np.isnan(out[-9]) and out[-8] == np.inf and out[-7] == 0 and out[-6] == 1 and out[-5] == 1


def test_tanh_float32_over_its_whole_range():
    """The vectorised float32 tanh: within 3 ulp everywhere, odd, exact limits, NaN through."""
    x = np.concatenate([np.linspace(-12, 12, 2_000_001, dtype=np.float32), np.float32([0.625, -0.625, 1e-30, -1e-30]),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)])
    out = np.empty_like(x)
    _C.unary(_C.UNARY_OPS["tanh"], x, out)
    ref = np.tanh(x.astype(np.float64))
    finite = np.isfinite(x)
    ulp = np.spacing(np.abs(ref[finite]).astype(np.float32))
    assert np.max(np.abs(out[finite] - ref[finite]) / ulp) <= 3.0
    np.testing.assert_array_equal(out[:2_000_001], -out[:2_000_001][::-1])
    assert np.isnan(out[-5]) and out[-4] == 1 and out[-3] == -1
    assert out[-1] == 0 and np.signbit(out[-1]) and not np.signbit(out[-2])


def test_erf_erfc_float32_over_their_whole_range():
    """The vectorised float32 erf (libm's erff costs ~20-60 ns a call): within 3 ulp everywhere (the
    Taylor branch below 0.5, 1 - erfc above, and across the switch), odd, exact limits, NaN through;
    erfc within 3e-7 relative wherever it is a normal float (its far tail is why it stays libm's)."""
    x = np.concatenate([np.linspace(-9.5, 9.5, 1_900_001, dtype=np.float32),
                        np.float32([0.5, -0.5, np.nextafter(np.float32(0.5), np.float32(0)), 1e-30, -1e-30, 1e-40]),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)])
    ref_erf = _erf(x.astype(np.float64))
    ref_erfc = _erfc(x.astype(np.float64))
    out = np.empty_like(x)
    _C.unary(_C.UNARY_OPS["erf"], x, out)
    finite = np.isfinite(x) & (np.abs(ref_erf) >= np.finfo(np.float32).tiny)
    ulp = np.spacing(np.abs(ref_erf[finite]).astype(np.float32))
    assert np.max(np.abs(out[finite] - ref_erf[finite]) / ulp) <= 3.0
    np.testing.assert_array_equal(out[:1_900_001], -out[:1_900_001][::-1])
    assert np.isnan(out[-5]) and out[-4] == 1 and out[-3] == -1
    assert out[-1] == 0 and np.signbit(out[-1]) and not np.signbit(out[-2])
    _C.unary(_C.UNARY_OPS["erfc"], x, out)
    normal = np.isfinite(x) & (ref_erfc >= np.finfo(np.float32).tiny)
    assert np.max(np.abs(out[normal] - ref_erfc[normal]) / ref_erfc[normal]) <= 3e-7
    assert np.isnan(out[-5]) and out[-4] == 0 and out[-3] == 2 and out[-2] == 1 and out[-1] == 1


@pytest.mark.parametrize("dtype", FLOATS)
def test_erf_erfc_sigmoid_tails(dtype):
    x = np.array([-40, -6, -1e-20, 0, 1e-20, 0.5, 6, 40, np.inf, -np.inf, np.nan], dtype)
    for op, ref in (("erf", _erf), ("erfc", _erfc), ("sigmoid", _sigmoid)):
        out = np.empty_like(x)
        _C.unary(_C.UNARY_OPS[op], x, out)
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(out, ref(x.astype(np.float64)).astype(dtype), equal_nan=True,
                                       **TOLERANCE[dtype])


@pytest.mark.parametrize("op", ["add", "mul", "maximum", "lt"])
def test_in_place_and_broadcast_operand(op):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((70, 600)).astype(np.float32)  # big enough for several threads
    b = rng.standard_normal(600).astype(np.float32)
    expected = NUMPY_BINARY[op](a, b)
    if op == "lt":
        out = np.empty(a.shape, np.bool_)
        assert _C.binary(_C.BINARY_OPS[op], a, b, out)
        np.testing.assert_array_equal(out, expected)
        return
    assert _C.binary(_C.BINARY_OPS[op], a, b, a)  # out is the input itself: in place
    np.testing.assert_array_equal(a, expected)


def test_partial_overlap_is_left_to_numpy():
    a = np.arange(100_000, dtype=np.float64)
    before = a.copy()
    x = np.ones(a.size - 1)
    assert _C.binary(_C.BINARY_OPS["add"], x, a[1:], a[1:]) is True  # out aliases `other` exactly: fine
    np.testing.assert_array_equal(a[1:], before[1:] + 1)
    a = before.copy()
    assert _C.binary(_C.BINARY_OPS["add"], a[:-1], 1.0, a[1:]) is False  # shifted alias: numpy's job
    np.testing.assert_array_equal(a, before)
    assert _C.unary(_C.UNARY_OPS["neg"], a[::-1], a) is False
    out = np.lib.stride_tricks.as_strided(np.zeros(1), (5,), (0,))
    assert _C.unary(_C.UNARY_OPS["neg"], np.ones(5), out) is False


def test_unaligned_views_are_left_to_numpy():
    raw = np.zeros(4 * 1000 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32)
    assert _C.unary(_C.UNARY_OPS["exp"], unaligned, np.empty(1000, np.float32)) is False


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "broadcast"])
def test_large_arrays_on_each_thread_count(threads, layout):
    old = _C.get_num_threads()
    _C.set_num_threads(threads)
    try:
        rng = np.random.default_rng(threads)
        base = rng.standard_normal((301, 517)).astype(np.float32)
        a = {"contiguous": base, "transposed": base.T, "stepped": base[::2, ::-3],
             "broadcast": base[:1]}[layout]
        b = rng.standard_normal(a.shape[-1]).astype(np.float32)
        shape = np.broadcast_shapes(a.shape, b.shape, (301, a.shape[-1]) if layout == "broadcast" else a.shape)
        out = np.empty(shape, np.float32)
        assert _C.binary(_C.BINARY_OPS["sub"], a, b, out, 2.0)
        np.testing.assert_allclose(out, np.broadcast_to(a - 2 * b, shape), rtol=0, atol=1e-6)
        out_t = np.empty(shape[::-1], np.float32).T  # a transposed out
        assert _C.unary(_C.UNARY_OPS["exp"], np.broadcast_to(a, shape), out_t)
        np.testing.assert_allclose(out_t, np.exp(np.broadcast_to(a, shape)), rtol=5e-7)
    finally:
        _C.set_num_threads(old)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["erf", "erfc", "sigmoid"])
def test_half_erf_erfc_sigmoid_run_in_float32_and_round_once(dtype, op):
    # numpy's own loop for these calls Python's math module per element; the kernel computes in
    # float32 and rounds once, so the result is the float32 one rounded (specials included)
    import flambeau as fb

    x = fb.cat([fb.randn(10_000), fb.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 6.0, -6.0])])
    half = x.to(getattr(fb, dtype))
    got = getattr(half, op)()
    want = getattr(half.float(), op)().to(getattr(fb, dtype))
    assert got.dtype == half.dtype
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())

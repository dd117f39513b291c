"""The pointwise catalogue beyond the conformance kit: aliases, call forms, ``flambeau.special``,
complex parts, edge values, errors, and broadcasting properties against numpy/scipy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special as sc

import flambeau as fb


def arr(t):
    return np.asarray(t.numpy())


# -- aliases and call forms ------------------------------------------------------------

@pytest.mark.parametrize("alias,target", [("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"),
                                          ("arcsinh", "asinh"), ("arctanh", "atanh"), ("fix", "trunc")])
def test_aliases_match_their_op(alias, target):
    x = fb.tensor([-0.7, 0.2, 0.55])
    assert np.array_equal(arr(getattr(fb, alias)(x)), arr(getattr(fb, target)(x)))
    assert np.array_equal(arr(getattr(x, alias)()), arr(getattr(x, target)()))
    y = x.clone()
    assert getattr(y, alias + "_")() is y
    assert np.array_equal(arr(y), arr(getattr(fb, target)(x)))


def test_arccosh_and_arctan2():
    x = fb.tensor([1.5, 3.0])
    assert np.allclose(arr(fb.arccosh(x)), np.arccosh([1.5, 3.0]))
    assert np.allclose(arr(fb.arctan2(x, -x)), np.arctan2([1.5, 3.0], [-1.5, -3.0]))
    assert np.allclose(arr(x.arctan2(x)), np.pi / 4)


def test_positive_returns_input_and_refuses_bool():
    x = fb.tensor([1.0, -2.0])
    assert fb.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not supported."):
        fb.positive(fb.tensor([True]))


def test_conj_family():
    x = fb.tensor([1.0, 2.0])
    assert fb.conj(x) is x and x.conj() is x
    z = fb.tensor([1 + 2j, -3j])
    assert np.array_equal(arr(z.conj().resolve_conj()), [1 - 2j, 3j])
    assert np.array_equal(arr(fb.conj_physical(z)), [1 - 2j, 3j])
    assert not fb.is_conj(z) and not z.is_neg() and fb.resolve_conj(z) is z and z.resolve_neg() is z
    w = z.clone()
    assert w.conj_physical_() is w and np.array_equal(arr(w), [1 - 2j, 3j])


def test_real_imag_are_views_and_settable():
    z = fb.tensor([1 + 2j, 3 - 4j], dtype=fb.complex128)
    re, im = z.real, z.imag
    assert re.dtype == fb.float64 and im.dtype == fb.float64
    re.add_(10)
    im.mul_(-1)
    assert np.array_equal(arr(z), [11 - 2j, 13 + 4j])
    z.imag = fb.tensor([0.5, 0.25], dtype=fb.float64)
    z.real = 0.0
    assert np.array_equal(arr(z), [0.5j, 0.25j])
    x = fb.tensor([1.0, 2.0])
    assert np.array_equal(arr(fb.real(x)), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag


def test_imag_of_non_contiguous_complex():
    z = fb.tensor(np.arange(12).reshape(3, 4) * (1 + 1j)).t()
    assert np.array_equal(arr(z.imag), np.arange(12).reshape(3, 4).T)


def test_polygamma_method_and_inplace():
    x = fb.tensor([0.5, 1.5, 4.0], dtype=fb.float64)
    want = sc.polygamma(2, [0.5, 1.5, 4.0])
    assert np.allclose(arr(x.polygamma(2)), want)
    y = x.clone()
    assert y.polygamma_(2) is y and np.allclose(arr(y), want)
    with pytest.raises(RuntimeError, match="does not support negative n"):
        fb.polygamma(-1, x)


def test_round_decimals():
    x = fb.tensor([1.2345, -2.5551, 0.125], dtype=fb.float64)
    assert np.allclose(arr(fb.round(x, decimals=2)), np.round([1.2345, -2.5551, 0.125], 2))


# -- flambeau.special ------------------------------------------------------------------

@pytest.mark.parametrize("name,ref", [
    ("erf", sc.erf), ("erfc", sc.erfc), ("erfinv", sc.erfinv), ("expit", sc.expit), ("gammaln", sc.gammaln),
    ("digamma", sc.psi), ("psi", sc.psi), ("i0", sc.i0), ("i0e", sc.i0e), ("i1", sc.i1), ("i1e", sc.i1e),
    ("ndtr", sc.ndtr), ("log_ndtr", sc.log_ndtr), ("sinc", np.sinc), ("entr", sc.entr), ("erfcx", sc.erfcx),
    ("expm1", np.expm1), ("exp2", np.exp2), ("log1p", np.log1p),
])
def test_special_namespace(name, ref):
    values = np.array([0.1, 0.35, 0.8])
    got = getattr(fb.special, name)(fb.tensor(values, dtype=fb.float64))
    assert np.allclose(arr(got), ref(values), rtol=1e-12, atol=1e-14)


def test_special_two_argument_functions():
    a = np.array([0.5, 2.0, 3.5])
    x = np.array([0.3, 1.0, 5.0])
    ta, tx = fb.tensor(a, dtype=fb.float64), fb.tensor(x, dtype=fb.float64)
    assert np.allclose(arr(fb.special.gammainc(ta, tx)), sc.gammainc(a, x))
    assert np.allclose(arr(fb.special.gammaincc(ta, tx)), sc.gammaincc(a, x))
    assert np.allclose(arr(fb.special.xlogy(ta, tx)), sc.xlogy(a, x))
    assert np.allclose(arr(fb.special.xlog1py(ta, tx)), sc.xlog1py(a, x))
    assert np.allclose(arr(fb.special.polygamma(1, tx)), sc.polygamma(1, x))
    assert np.allclose(arr(fb.special.multigammaln(tx + 3, 3)), [sc.multigammaln(v + 3, 3) for v in x])
    assert np.allclose(arr(fb.special.ndtri(fb.tensor([0.1, 0.5]))), sc.ndtri([0.1, 0.5]), atol=1e-6)
    assert np.allclose(arr(fb.special.logit(fb.tensor([0.25]))), [math.log(1 / 3)])


def test_special_logsumexp_when_declared():
    if not hasattr(fb, "logsumexp"):
        pytest.skip("no logsumexp op declared")
    x = fb.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=fb.float64)
    assert np.allclose(arr(fb.special.logsumexp(x, 1)), np.log(np.exp(arr(x)).sum(1)))


# -- values at the edges ---------------------------------------------------------------

def test_nan_to_num_defaults_are_the_dtype_extremes():
    for dtype, info in ((fb.float32, np.finfo(np.float32)), (fb.float16, np.finfo(np.float16))):
        x = fb.tensor([math.nan, math.inf, -math.inf, 1.0], dtype=dtype)
        assert np.array_equal(arr(fb.nan_to_num(x)), np.array([0, info.max, info.min, 1], dtype=info.dtype))
    x = fb.tensor([math.nan, math.inf], dtype=fb.bfloat16)
    out = fb.nan_to_num(x, nan=1.5).float()
    assert arr(out)[0] == 1.5 and np.isfinite(arr(out)[1])


def test_digamma_lgamma_at_poles():
    x = fb.tensor([0.0, -0.0, -2.0], dtype=fb.float64)
    d = arr(fb.digamma(x))
    assert d[0] == -math.inf and d[1] == math.inf and np.isnan(d[2])
    assert np.all(np.isinf(arr(fb.lgamma(x))))


def test_signbit_sees_negative_zero():
    assert arr(fb.signbit(fb.tensor([-0.0, 0.0, -1.0, math.nan]))).tolist() == [True, False, True, False]
    assert arr(fb.signbit(fb.tensor([-3, 0, 2]))).tolist() == [True, False, False]


def test_frexp_named_tuple_and_out():
    x = fb.tensor([8.0, -0.375, 0.0])
    m, e = fb.frexp(x)
    assert e.dtype == fb.int32
    assert np.array_equal(arr(m) * 2.0 ** arr(e), arr(x))
    mo, eo = fb.empty(3), fb.empty(3, dtype=fb.int32)
    r = fb.frexp(x, out=(mo, eo))
    assert r.mantissa is mo and r.exponent is eo


def test_float_power_dtype_and_inplace_rule():
    x = fb.tensor([1.0, 2.0])
    assert fb.float_power(x, 2).dtype == fb.float64
    assert fb.float_power(fb.tensor([4]), 0.5).dtype == fb.float64
    assert fb.float_power(x, 1j).dtype == fb.complex128
    with pytest.raises(RuntimeError, match="has dtype Float but the operation's result requires dtype Double"):
        x.float_power_(2)
    y = fb.tensor([2.0, 3.0], dtype=fb.float64)
    assert y.float_power_(2) is y and np.array_equal(arr(y), [4.0, 9.0])


def test_gcd_lcm_and_errors():
    a, b = fb.tensor([12, -18, 0, 7]), fb.tensor([8, 12, 5, 0])
    assert arr(fb.gcd(a, b)).tolist() == [4, 6, 5, 7]
    assert arr(fb.lcm(a, b)).tolist() == [24, 36, 0, 0]
    with pytest.raises(NotImplementedError, match="\"gcd_cpu\" not implemented for 'Float'"):
        fb.gcd(fb.tensor([1.0]), fb.tensor([2.0]))


def test_mvlgamma_domain_error():
    with pytest.raises(RuntimeError, match="All elements must be greater than \\(p-1\\)/2"):
        fb.mvlgamma(fb.tensor([0.4, 3.0]), 2)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        fb.mvlgamma(fb.tensor([3.0]), 0)


def test_addcdiv_refuses_integer_division_and_promotes():
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        fb.addcdiv(fb.tensor([1.0]), fb.tensor([1]), fb.tensor([2]))
    out = fb.addcmul(fb.tensor([1]), fb.tensor([2]), fb.tensor([0.5], dtype=fb.float64), value=2)
    assert out.dtype == fb.float64 and arr(out).tolist() == [3.0]


def test_int_inputs_promote_to_float():
    x = fb.tensor([1, 2, 3])
    for fn in (fb.lgamma, fb.digamma, fb.erfinv, fb.i0, fb.sinc, fb.deg2rad, fb.angle, fb.logit):
        assert fn(x).dtype == fb.float32, fn
    assert fb.xlogy(x, x).dtype == fb.float32
    assert fb.copysign(x, -1).dtype == fb.float32
    assert fb.ldexp(x, fb.tensor([1, 1, 1])).dtype == fb.float32
    assert fb.ldexp(fb.tensor([1.0], dtype=fb.float64), fb.tensor([2])).dtype == fb.float64
    assert fb.angle(fb.tensor([1j], dtype=fb.complex128)).dtype == fb.float64


def test_inplace_and_out_bump_the_version():
    x = fb.tensor([0.2, 0.4])
    v = x._version_counter[0]
    x.lgamma_()
    assert x._version_counter[0] > v
    out = fb.empty(2)
    v = out._version_counter[0]
    assert fb.hypot(fb.tensor([3.0, 5.0]), fb.tensor([4.0, 12.0]), out=out) is out
    assert out._version_counter[0] > v and arr(out).tolist() == [5.0, 13.0]


def test_in_place_cannot_change_dtype():
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        fb.tensor([1, 2]).lgamma_()


# -- broadcasting properties -----------------------------------------------------------

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3)


@settings(max_examples=25, deadline=None)
@given(shapes, shapes, st.sampled_from(["hypot", "logaddexp", "logaddexp2", "copysign", "xlogy", "nextafter"]))
def test_binary_broadcasting_matches_numpy(s1, s2, name):
    try:
        want_shape = np.broadcast_shapes(tuple(s1), tuple(s2))
    except ValueError:
        with pytest.raises(RuntimeError, match="must match the size"):
            getattr(fb, name)(fb.ones(s1), fb.ones(s2))
        return
    rng = np.random.default_rng(len(s1) * 7 + len(s2))
    a = rng.uniform(0.1, 3, size=s1)
    b = rng.uniform(-3, 3, size=s2) if name != "xlogy" else rng.uniform(0.1, 3, size=s2)
    ref = {"hypot": np.hypot, "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2, "copysign": np.copysign,
           "xlogy": sc.xlogy, "nextafter": np.nextafter}[name]
    got = getattr(fb, name)(fb.tensor(a, dtype=fb.float64), fb.tensor(b, dtype=fb.float64))
    assert tuple(got.shape) == want_shape
    assert np.allclose(arr(got), ref(a, b), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(shapes, shapes, shapes, st.floats(-2, 2))
def test_addcmul_broadcasting_matches_numpy(s1, s2, s3, value):
    try:
        np.broadcast_shapes(tuple(s1), tuple(s2), tuple(s3))
    except ValueError:
        return
    rng = np.random.default_rng(3)
    a, b, c = (rng.uniform(-1, 1, size=s) for s in (s1, s2, s3))
    t = [fb.tensor(v, dtype=fb.float64) for v in (a, b, c)]
    assert np.allclose(arr(fb.addcmul(*t, value=value)), a + value * b * c)
    assert np.allclose(arr(fb.addcdiv(t[0], t[1], t[2] + 3, value=value)), a + value * b / (c + 3))


# -- large and edge inputs (the CPU backend's threaded C++ kernels take these) ---------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_contiguous_inputs_match_numpy(dtype):
    rng = np.random.default_rng(5)
    n = 200_003  # several chunks, and a ragged last one
    x, a, b = (rng.uniform(0.2, 4, n).astype(dtype) for _ in range(3))
    tx, ta, tb = fb.tensor(x), fb.tensor(a), fb.tensor(b)
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    wide = [v.astype(np.float64) for v in (x, a, b)]
    assert np.allclose(arr(fb.addcmul(tx, ta, tb, value=-0.5)), wide[0] - 0.5 * wide[1] * wide[2], rtol=rtol)
    assert np.allclose(arr(fb.addcdiv(tx, ta, tb, value=2)), wide[0] + 2 * wide[1] / wide[2], rtol=rtol)
    assert np.allclose(arr(fb.hypot(ta, tb)), np.hypot(wide[1], wide[2]), rtol=rtol)
    assert np.allclose(arr(fb.logaddexp(ta, tb)), np.logaddexp(wide[1], wide[2]), rtol=rtol)
    assert np.allclose(arr(fb.logaddexp2(ta, tb)), np.logaddexp2(wide[1], wide[2]), rtol=rtol)
    assert np.allclose(arr(fb.lgamma(tx)), sc.gammaln(wide[0]), rtol=rtol * 4, atol=1e-6)
    y = tx.clone()
    assert y.addcmul_(ta, tb, value=3) is y
    assert np.allclose(arr(y), wide[0] + 3 * wide[1] * wide[2], rtol=rtol)


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_hypot_logaddexp_special_values(dtype):
    inf, nan = math.inf, math.nan
    a = fb.tensor([inf, nan, -inf, inf, -inf, 3.0, 0.0], dtype=dtype)
    b = fb.tensor([nan, inf, -inf, inf, 1.0, 4.0, -0.0], dtype=dtype)
    h = arr(fb.hypot(a, b))
    assert h[0] == inf and h[1] == inf and h[2] == inf and h[5] == 5.0 and h[6] == 0.0
    le = arr(fb.logaddexp(a, b))
    assert np.isnan(le[0]) and np.isnan(le[1]) and le[2] == -inf and le[3] == inf and le[4] == 1.0
    le2 = arr(fb.logaddexp2(a, b))
    assert le2[2] == -inf and le2[3] == inf and le2[4] == 1.0
    assert np.isclose(arr(fb.logaddexp2(fb.tensor([1.0], dtype=dtype), fb.tensor([1.0], dtype=dtype)))[0], 2.0)


def test_lgamma_at_negative_and_poles_large():
    x = np.tile(np.array([-2.5, -0.5, 0.0, -3.0, 1e-3, 30.0], dtype=np.float32), 10_000)
    got = arr(fb.lgamma(fb.tensor(x)))
    assert np.allclose(got, sc.gammaln(x.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("name,ref", [
    ("bessel_j0", sc.j0), ("bessel_j1", sc.j1), ("bessel_y0", sc.y0), ("bessel_y1", sc.y1),
    ("modified_bessel_i0", sc.i0), ("modified_bessel_i1", sc.i1), ("modified_bessel_k0", sc.k0),
    ("modified_bessel_k1", sc.k1), ("scaled_modified_bessel_k0", sc.k0e), ("scaled_modified_bessel_k1", sc.k1e),
    ("spherical_bessel_j0", lambda v: sc.spherical_jn(0, v)),
])
def test_special_bessel_functions(name, ref):
    values = np.array([0.25, 1.0, 3.5, 7.0])
    got = getattr(fb.special, name)(fb.tensor(values, dtype=fb.float64))
    assert np.allclose(arr(got), ref(values), rtol=1e-12)
    assert getattr(fb.special, name)(fb.tensor([1, 2])).dtype == fb.float32


def test_special_zeta():
    s, q = np.array([2.0, 3.5, 1.5]), np.array([1.0, 0.5, 4.0])
    got = fb.special.zeta(fb.tensor(s, dtype=fb.float64), fb.tensor(q, dtype=fb.float64))
    assert np.allclose(arr(got), sc.zeta(s, q), rtol=1e-12)
    assert np.isclose(arr(fb.special.zeta(2.0, fb.tensor([1.0], dtype=fb.float64)))[0], math.pi ** 2 / 6)


@pytest.mark.parametrize("alias,target,arg", [("absolute", "abs", None), ("negative", "neg", None),
                                              ("multiply", "mul", 2.0), ("divide", "div", 4.0),
                                              ("subtract", "sub", 1.0), ("true_divide", "div", 8.0)])
def test_inplace_forms_of_older_aliases(alias, target, arg):
    x = fb.tensor([-1.5, 2.0])
    args = () if arg is None else (arg,)
    want = arr(getattr(fb, target)(x, *args))
    y = x.clone()
    assert getattr(y, alias + "_")(*args) is y and np.array_equal(arr(y), want)
    assert np.array_equal(arr(getattr(fb, alias)(x, *args)), want)


# -- flambeau.gradient -----------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(3, 5), min_size=1, max_size=3), st.sampled_from([1, 2]),
       st.floats(0.25, 3), st.booleans())
def test_gradient_matches_numpy(shape, edge_order, h, transposed):
    rng = np.random.default_rng(sum(shape))
    f = rng.uniform(-2, 2, size=shape)
    t = fb.tensor(f, dtype=fb.float64)
    if transposed and len(shape) >= 2:
        f = f.T
        t = t.t() if len(shape) == 2 else t.permute(*reversed(range(len(shape))))
    got = fb.gradient(t, spacing=h, edge_order=edge_order)
    want = np.gradient(f, h, edge_order=edge_order)
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.allclose(arr(g), w, rtol=1e-12, atol=1e-12)


def test_gradient_coordinates_dims_and_errors():
    f = np.array([[1.0, 2, 4, 8, 10], [3, 5, 1, 0, 2], [0, 1, 1, 3, 7]])
    x = np.array([0.0, 0.5, 1.5, 3.0, 3.2])
    t = fb.tensor(f, dtype=fb.float64)
    for eo in (1, 2):
        (g,) = fb.gradient(t, spacing=[fb.tensor(x, dtype=fb.float64)], dim=1, edge_order=eo)
        assert np.allclose(arr(g), np.gradient(f, x, axis=1, edge_order=eo))
    g0, g1 = fb.gradient(t, spacing=[2.0, 0.5], dim=[0, 1])
    assert np.allclose(arr(g0), np.gradient(f, 2.0, axis=0)) and np.allclose(arr(g1), np.gradient(f, 0.5, axis=1))
    assert fb.gradient(fb.tensor([1, 4, 9, 16]))[0].dtype == fb.float32
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        fb.gradient(fb.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        fb.gradient(t, edge_order=3)
    with pytest.raises(RuntimeError, match="spacing"):
        fb.gradient(t, spacing=[1.0, 2.0, 3.0])


def test_float32_lgamma_over_its_range():
    # the CPU backend computes float32 lgamma in double with its own series: check it everywhere
    x = np.concatenate([np.linspace(-20, 40, 100_001), -np.logspace(-30, 1, 500), np.logspace(-30, 30, 500),
                        [0.0, -1.0, -2.0, 1.0, 2.0, math.inf, math.nan]]).astype(np.float32)
    got = arr(fb.lgamma(fb.tensor(x))).astype(np.float64)
    want = sc.gammaln(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    want[x == -math.inf] = math.inf
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite], equal_nan=True)
    assert np.all(np.abs(got[finite] - want[finite]) <= 2e-7 * np.maximum(np.abs(want[finite]), 1e-3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_wide_range(dtype):
    rng = np.random.default_rng(9)
    a, b = rng.uniform(-80, 80, 50_000).astype(dtype), rng.uniform(-80, 80, 50_000).astype(dtype)
    b[:100] = a[:100] + rng.uniform(-1e-6, 1e-6, 100).astype(dtype)  # nearly equal operands
    # where the result nears 0 it cancels: an ulp of the operands (float32: ~6e-8 near 0.5) is the floor
    rtol, atol = (1e-6, 2e-7) if dtype == np.float32 else (1e-14, 1e-15)
    for name, ref in (("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2)):
        got = arr(getattr(fb, name)(fb.tensor(a), fb.tensor(b)))
        assert np.allclose(got, ref(a.astype(np.float64), b.astype(np.float64)), rtol=rtol, atol=atol)

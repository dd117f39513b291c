"""The decompositions of the gamma family (digamma, polygamma, mvlgamma, special_zeta, igamma,
igammac) and of the normal/error-function family (erfinv, special_ndtri, special_log_ndtr,
special_erfcx) against scipy, within the bounds their modules state
(flambeau._core_ops.decomp.special_gamma, .special_normal).

Each runs on the cpu device with the op's own kernel bypassed (the ops a decomposition calls keep
the CPU's kernels), and, where flambeau-backend-example is installed, on the example device, where
every op past the core tier is itself decomposed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS

special = pytest.importorskip("scipy.special")

# float32 inputs and references that overflow to inf on purpose
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")


def _devices() -> list[str]:
    try:
        fb.zeros(1, device="example")
    except Exception:  # flambeau-backend-example is not installed
        return ["cpu"]
    return ["cpu", "example"]


DEVICES = _devices()


def _decomposed(name, *args):
    """Op ``name``'s decomposition on the device of its first tensor argument."""
    op = OPS[name]
    device = next(a for a in args if isinstance(a, fb.Tensor)).device
    full = args + tuple(p.default for p in op.parameters[len(args):])
    return _without_kernel(op, device, full, None, False)


def _run(name, device, dtype, *arrays, extra=()):
    tensors = [fb.tensor(np.asarray(a, dtype=dtype), device=device) for a in arrays]
    got = _decomposed(name, *extra, *tensors)
    assert got.dtype == getattr(fb, dtype)
    return got.cpu().numpy()


def _check(got, want, rtol, dtype):
    """``got`` within ``rtol`` of ``want`` (scipy in float64, rounded to ``dtype``), same NaNs and
    infinities; where ``want`` is subnormal in ``dtype`` only the absolute difference counts."""
    want = np.asarray(want, dtype=np.float64).astype(dtype).astype(np.float64)
    got = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    tiny = np.finfo(dtype).tiny
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=tiny * 4)


RNG = np.random.default_rng(1234)

# -- erfinv, ndtri, log_ndtr, erfcx -------------------------------------------------------------

ERFINV_X = np.concatenate([RNG.uniform(-1, 1, 4000), 1 - np.logspace(-16, -1, 500), -(1 - np.logspace(-16, -1, 100)),
                           [0.0, 0.5, -0.5, 1e-300, 0.25]])
NDTRI_P = np.concatenate([RNG.uniform(0, 1, 4000), np.logspace(-320, -1, 500), 1 - np.logspace(-16, -1, 100),
                          [0.5, 0.25, 0.75]])
# scipy's log_ndtr is off by up to 3e-14 from x = 6 (it rounds x^2 / 2 in exp): there, mpmath (below)
LOG_NDTR_X = np.concatenate([RNG.uniform(-10, 5, 4000), -np.logspace(-3, 6, 500), np.logspace(-3, 0.7, 100)])
ERFCX_X = np.concatenate([RNG.uniform(-26, 30, 4000), np.logspace(-3, 307, 500), -np.logspace(-3, 1.4, 100)])

# (op, scipy, inputs, float64 bound, float32 bound); float32 against scipy's float64 rounded:
# about 2-4 ulp (1.2e-7 is one ulp at 1), the float64 bounds are twice the largest error seen.
NORMAL = [
    ("erfinv", special.erfinv, ERFINV_X, 3e-15, 3.6e-7),
    ("special_ndtri", special.ndtri, NDTRI_P, 3e-15, 3.6e-7),
    # float32: the fit's 1.2e-7 from y = 0.5 on the example backend, 5 ulp
    # float64: 1.1e-14 on the example backend, whose erfc is 1 - erf below y = 2
    ("special_log_ndtr", special.log_ndtr, LOG_NDTR_X, 2e-14, 6e-7),
    # scipy's erfcx rounds x^2 in exp(x^2): its own error reaches 5e-14 below x = -20 (mpmath)
    ("special_erfcx", special.erfcx, ERFCX_X, 1e-13, 6e-7),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, ref, x, rtol64, rtol32", NORMAL, ids=[n[0] for n in NORMAL])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_normal_family_accuracy(device, name, ref, x, rtol64, rtol32, dtype):
    x = x.astype(dtype)
    got = _run(name, device, dtype, x)
    _check(got, ref(x.astype(np.float64)), rtol64 if dtype == "float64" else rtol32, dtype)


def test_log_ndtr_right_tail_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    x = np.linspace(5, 37, 321)
    got = _run("special_log_ndtr", "cpu", "float64", x)
    want = np.array([float(mpmath.log1p(-mpmath.ncdf(-mpmath.mpf(v)))) for v in x])
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_erfcx_is_exact_where_scipy_rounds_the_square():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = np.array([-25.9, -23.8199, -20.3, -12.25, -6.6])
    got = _run("special_erfcx", "cpu", "float64", x)
    want = np.array([float(mpmath.exp(mpmath.mpf(v) ** 2) * mpmath.erfc(mpmath.mpf(v))) for v in x])
    np.testing.assert_allclose(got, want, rtol=4e-16)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_normal_family_special_values(device, dtype):
    edge = [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, math.nan, math.inf, -math.inf]
    for name, ref in (("erfinv", special.erfinv), ("special_ndtri", special.ndtri),
                      ("special_log_ndtr", special.log_ndtr), ("special_erfcx", special.erfcx)):
        got = _run(name, device, dtype, edge)
        want = ref(np.array(edge))
        _check(got, want, 2e-15 if dtype == "float64" else 6e-7, dtype)
        zeros = want == 0
        signs = np.signbit(np.array(edge))[zeros] if name == "erfinv" else np.signbit(want[zeros])  # PyTorch: -0 at -0
        np.testing.assert_array_equal(np.signbit(got[zeros]), signs, err_msg=name)
    # far tails: no underflow in log_ndtr, erfcx of huge x
    np.testing.assert_allclose(_run("special_log_ndtr", device, "float64", [-1e5, -1e150]),
                               special.log_ndtr([-1e5, -1e150]), rtol=1e-15)
    np.testing.assert_allclose(_run("special_erfcx", device, "float64", [1e300, 1e308]),
                               special.erfcx([1e300, 1e308]), rtol=1e-15)


# -- digamma, polygamma, zeta, mvlgamma ---------------------------------------------------------

DIGAMMA_X = np.concatenate([RNG.uniform(0, 10, 3000), RNG.uniform(0, 3, 3000), np.logspace(-300, 300, 500),
                            1.4616321449683623 + np.linspace(-0.3, 0.3, 601), RNG.uniform(-10, 0, 2000)])


def _away_from_negative_roots(x):
    """Drop ``x < 0`` within 0.05 of digamma's roots other than -0.504 (each interval (-n, -n+1)
    has one), where the reflection's two terms cancel, in scipy's formula as in this one."""
    grid = np.linspace(-10.5, -0.6, 200001)
    values = special.psi(grid)
    change = np.nonzero(np.diff(np.sign(values)) > 0)[0]  # - to +: the roots (not the poles)
    r = grid[change]
    # and within 1e-3 of the poles, where scipy's reflection loses (1e-12; mpmath below)
    near_pole = (x < 0) & (np.abs(x - np.round(x)) < 1e-3)
    return (np.all(np.abs(x[:, None] - r[None, :]) > 0.05, axis=1) | (x >= -0.6)) & ~near_pole


@pytest.mark.parametrize("device", DEVICES)
# float32: ~10 ulp between 0.8 and 2.1 (the recurrence's log(x + 10) against the reciprocals),
# PyTorch's float32 formula loses as much there
@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 1.2e-6)])
def test_digamma_accuracy(device, dtype, rtol):
    x = DIGAMMA_X[_away_from_negative_roots(DIGAMMA_X)].astype(dtype)
    _check(_run("digamma", device, dtype, x), special.psi(x.astype(np.float64)), rtol, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_digamma_near_its_roots(device):
    # the positive root and -0.504: relative accuracy kept by the Taylor series there
    x = np.concatenate([1.4616321449683623 + np.linspace(-0.2, 0.2, 401),
                        -0.5040830082644554 + np.linspace(-0.1, 0.1, 201)])
    x = x[np.abs(special.psi(x)) > 1e-14]
    _check(_run("digamma", device, "float64", x), special.psi(x), 1e-13, "float64")
    # elsewhere on the negative axis: absolute accuracy (away from the poles: scipy loses there)
    x = RNG.uniform(-10, 0, 2000)
    x = x[np.abs(x - np.round(x)) > 1e-3]
    np.testing.assert_allclose(_run("digamma", device, "float64", x), special.psi(x), rtol=1e-13, atol=2e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_digamma_and_polygamma_on_the_negative_axis_against_mpmath(device):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = np.concatenate([-np.arange(1, 10) + 10.0 ** -np.arange(2, 11), -np.arange(1, 10) - 10.0 ** -np.arange(2, 11),
                        RNG.uniform(-9, 0, 60), [-1.5, -0.5, -2.25, -6.5]])
    x = x[np.round(x) != x]
    for n in (0, 1, 2, 3, 6):
        # n = 0: digamma's own decomposition (polygamma's calls the device's digamma: scipy's on cpu)
        got = _run("polygamma", device, "float64", x, extra=(n,)) if n else _run("digamma", device, "float64", x)
        want = np.array([float(mpmath.polygamma(n, mpmath.mpf(v))) for v in x])
        scale = np.abs(want) if n else np.maximum(np.abs(want), 1.0)  # digamma: its roots
        np.testing.assert_array_less(np.abs(got - want), 1e-13 * scale + 1e-300, err_msg=f"n={n}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_digamma_special_values(device, dtype):
    x = [0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan, 1.0, -1e-300, 1e-300]
    _check(_run("digamma", device, dtype, x), special.psi(np.array(x)), 2e-15 if dtype == "float64" else 1.2e-7, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("dtype, rtol", [("float64", 4e-15), ("float32", 1e-6)])
def test_polygamma(device, n, dtype, rtol):
    # x > 0 (scipy's direct sums for x < 0 lose up to 6e-12: mpmath above), and the poles
    x = np.concatenate([RNG.uniform(0, 10, 1000), np.logspace(-5, 5, 200),
                        [0.0, -1.0, -3.0, math.inf, math.nan, 1.0]]).astype(dtype)
    got = _run("polygamma", device, dtype, x, extra=(n,))
    _check(got, special.polygamma(n, x.astype(np.float64)), rtol, dtype)


@pytest.mark.parametrize("device", DEVICES)
# float32: pow's error, s log(q) eps relative (4e-6 for s = 20, q = 30)
@pytest.mark.parametrize("dtype, rtol", [("float64", 4e-15), ("float32", 1e-5)])
def test_zeta(device, dtype, rtol):
    s = np.concatenate([RNG.uniform(1, 25, 2000),
                        [1.0, 0.5, 2.0, 2.5, 2.0, 3.0, math.nan, 2.0, 60.0, 150.0, 0.0, 4.0]])
    q = np.concatenate([RNG.uniform(-5, 30, 2000),
                        [1.0, 1.0, 0.0, -1.5, -1.5, -2.0, 1.0, math.nan, 3.0, 1.5, 0.0, math.inf]])
    got = _run("special_zeta", device, dtype, s, q)
    _check(got, special.zeta(s, q), rtol, dtype)


def test_zeta_scalar_arguments_and_broadcasting():
    q = fb.tensor([[0.5], [2.0]], dtype=fb.float64)
    got = _decomposed("special_zeta", 3.0, q).numpy()
    np.testing.assert_allclose(got, special.zeta(3.0, [[0.5], [2.0]]), rtol=1e-15)
    s = fb.tensor([2.0, 3.0, 4.0])
    np.testing.assert_allclose(_decomposed("special_zeta", s, 1).numpy(), special.zeta([2.0, 3.0, 4.0], 1), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma(device, p):
    x = RNG.uniform((p - 1) / 2 + 0.01, 30, 500)
    want = np.array([special.multigammaln(v, p) for v in x])
    # lgamma's decomposition (on example) bounds this: ~3e-14 absolute near its roots
    got = _decomposed("mvlgamma", fb.tensor(x, device=device), p).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=5e-14)
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        _decomposed("mvlgamma", fb.tensor([(p - 1) / 2, 40.0], device=device), p)


# -- igamma, igammac ---------------------------------------------------------------------------

IG_A = np.concatenate([RNG.uniform(0, 30, 2000), np.logspace(-3, 4, 300)])
IG_X = np.concatenate([RNG.uniform(0, 40, 2000), np.logspace(-3, 4, 300)[::-1] * RNG.uniform(0.5, 1.5, 300)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, ref", [("igamma", special.gammainc), ("igammac", special.gammaincc)])
@pytest.mark.parametrize("dtype, rtol", [("float64", 5e-13), ("float32", 3e-5)])
def test_incomplete_gamma(device, name, ref, dtype, rtol):
    a, x = IG_A.astype(dtype), IG_X.astype(dtype)
    got = _run(name, device, dtype, a, x)
    want = ref(a.astype(np.float64), x.astype(np.float64))
    # results far in the tails (x^a e^-x / Gamma(a) of e^-600) carry the exponent's rounding: both
    # this and scipy are within ~1e-13 there; float32 carries it at its own precision
    _check(got, want, rtol, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_incomplete_gamma_special_values(device):
    a = [0.0, 0.0, 1.0, -1.0, 1.0, math.inf, math.inf, 1.0, math.nan, 2.0, 0.0]
    x = [0.0, 1.0, 0.0, 1.0, -1.0, 1.0, math.inf, math.inf, 1.0, math.nan, math.inf]
    for name, ref in (("igamma", special.gammainc), ("igammac", special.gammaincc)):
        np.testing.assert_array_equal(_run(name, device, "float64", a, x), ref(a, x), err_msg=name)


# -- dtypes, shapes, layouts ---------------------------------------------------------------------

UNARY = ["digamma", "erfinv", "special_ndtri", "special_log_ndtr", "special_erfcx"]


@pytest.mark.parametrize("name", UNARY)
def test_half_integer_empty_0d_and_noncontiguous(name):
    values = fb.tensor([[0.1, 0.3], [0.6, 0.9]])
    for dt in (fb.float16, fb.bfloat16, fb.int64):
        t = (values * 4).to(dt) if dt is fb.int64 else values.to(dt)
        got = _decomposed(name, t)
        namespace = fb.special if name.startswith("special_") else fb
        want = getattr(namespace, name.removeprefix("special_"))(t)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.to(fb.float64).numpy(), want.to(fb.float64).numpy(), rtol=1e-2)
    assert _decomposed(name, fb.zeros((0, 3))).shape == (0, 3)
    zero_d = _decomposed(name, fb.tensor(0.3, dtype=fb.float64))
    assert zero_d.shape == ()
    assert zero_d.item() == _decomposed(name, fb.tensor([0.3], dtype=fb.float64)).item()
    base = fb.tensor(np.linspace(0.05, 0.95, 24).reshape(4, 6), dtype=fb.float64)
    strided = base.t()[::2]
    np.testing.assert_array_equal(_decomposed(name, strided).numpy(), _decomposed(name, strided.contiguous()).numpy())


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-0.999, 0.999), min_size=1, max_size=20))
def test_erfinv_inverts_erf(values):
    x = np.array(values)
    y = _run("erfinv", "cpu", "float64", x)
    np.testing.assert_allclose(y, special.erfinv(x), rtol=3e-15, atol=1e-300)

"""clamp in the core tier (the backend kit's kernel) and maximum/minimum/clamp_min/clamp_max decomposed
onto it, against numpy's maximum/minimum (which propagate NaN as PyTorch does)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS


def _decomposed(name, *args):
    """Op ``name`` as a backend without its kernel runs it (on the CPU's kernels for the rest)."""
    op = OPS[name]
    full = args + tuple(p.default for p in op.parameters[len(args):])
    return _without_kernel(op, fb.device("cpu"), full, None, False)


def _example_kernels():
    kit = pytest.importorskip("flambeau.backend_kit")
    _storage = pytest.importorskip("flambeau_example._storage")  # numpy arrays as a device's memory

    return kit.make_core_kernels(np, _storage, lambda generator, out: np.random.default_rng(0), erf=kit.host_erf)


FLOATS = np.array([-np.inf, -3.5, -0.0, 0.0, 0.25, 1.0, 7.0, np.inf, np.nan])


def test_clamp_is_core_and_the_family_decomposes_onto_it():
    assert OPS["clamp"].tier == "core" and OPS["clamp"].composite is None
    core = [name for name, d in OPS.items() if d.tier == "core"]
    assert len(core) == 60
    for name in ("maximum", "minimum", "clamp_min", "clamp_max"):
        assert "clamp" in OPS[name].uses, name
        assert not {"lt", "gt", "where"} & set(OPS[name].uses), name  # one pass, not compare-and-select


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_maximum_minimum_propagate_nan_in_every_float_dtype(dtype):
    a, b = np.meshgrid(FLOATS, FLOATS)
    a, b = a.astype(dtype), b.astype(dtype)
    ta, tb = fb.from_numpy(a), fb.from_numpy(b)
    for name, ref in (("maximum", np.maximum), ("minimum", np.minimum)):
        got = _decomposed(name, ta, tb).numpy()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, ref(a, b), err_msg=name)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_maximum_minimum_integers(dtype):
    info = np.iinfo(dtype)
    vals = np.array([info.min, info.min + 1, -1 if info.min < 0 else 0, 0, 1, 5, info.max], dtype=dtype)
    a, b = np.meshgrid(vals, vals)
    for name, ref in (("maximum", np.maximum), ("minimum", np.minimum)):
        got = _decomposed(name, fb.from_numpy(a), fb.from_numpy(b)).numpy()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, ref(a, b), err_msg=name)


def test_maximum_minimum_bool_and_mixed_dtypes():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(_decomposed("maximum", fb.from_numpy(a), fb.from_numpy(b)).numpy(), a | b)
    np.testing.assert_array_equal(_decomposed("minimum", fb.from_numpy(a), fb.from_numpy(b)).numpy(), a & b)
    i = np.array([3, -2, 0, 1], dtype=np.int32)
    got = _decomposed("maximum", fb.from_numpy(i), fb.from_numpy(a)).numpy()  # promoted: int32
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.maximum(i, a.astype(np.int32)))
    f = np.array([0.5, np.nan, -1.0, 2.0], dtype=np.float32)
    got = _decomposed("minimum", fb.from_numpy(i), fb.from_numpy(f)).numpy()  # promoted: float32
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.minimum(i.astype(np.float32), f))


def test_maximum_broadcasts_zero_dim_empty_and_non_contiguous():
    a = fb.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4)).t()  # non-contiguous
    b = fb.tensor(5.0, dtype=fb.float64)
    np.testing.assert_array_equal(_decomposed("maximum", a, b).numpy(), np.maximum(a.numpy(), 5.0))
    col = fb.from_numpy(np.array([[1.0], [np.nan], [20.0], [-1.0]]))
    np.testing.assert_array_equal(_decomposed("minimum", a, col).numpy(), np.minimum(a.numpy(), col.numpy()))
    e = fb.zeros(0, 3)
    assert _decomposed("maximum", e, fb.zeros(3)).shape == (0, 3)
    assert _decomposed("minimum", b, b).shape == ()


@pytest.mark.parametrize("bound", [0.25, -0.0, float("nan"), float("inf"), -float("inf")])
def test_clamp_min_max_with_a_number(bound):
    x = FLOATS.astype(np.float32)
    tx = fb.from_numpy(x)
    np.testing.assert_array_equal(_decomposed("clamp_min", tx, bound).numpy(), np.maximum(x, np.float32(bound)))
    np.testing.assert_array_equal(_decomposed("clamp_max", tx, bound).numpy(), np.minimum(x, np.float32(bound)))


def test_clamp_min_max_with_a_tensor_and_integers():
    x = np.array([-5, 0, 3, 100], dtype=np.int16)
    lo = np.array([0, 1, 5, 50], dtype=np.int16)
    np.testing.assert_array_equal(_decomposed("clamp_min", fb.from_numpy(x), fb.from_numpy(lo)).numpy(),
                                  np.maximum(x, lo))
    np.testing.assert_array_equal(_decomposed("clamp_max", fb.from_numpy(x), 2).numpy(), np.minimum(x, 2))
    u = fb.from_numpy(np.array([0, 10, 250], dtype=np.uint8))
    # PyTorch: a negative int bound of an unsigned tensor wraps (-5 -> 251)
    np.testing.assert_array_equal(_decomposed("clamp_min", u, -5).numpy(), fb.clamp_min(u, -5).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8"])
@pytest.mark.parametrize("low, high", [(0.0, 5.0), (None, 3.0), (2.0, None), (6.0, 1.0), (float("nan"), 1.0),
                                       (1.0, float("nan"))])
def test_kit_clamp_kernel_matches_pytorch_order(dtype, low, high):
    kernels = _example_kernels()
    if np.dtype(dtype).kind in "iu" and any(v is not None and v != v for v in (low, high)):
        pytest.skip("a NaN bound makes the result float")
    kind = np.dtype(dtype).kind
    base = np.array([-2, 0, 1, 3, 4, 7, 255] if kind == "u" else [-2, 0, 1, 3, 4, 7, -100])
    x = base.astype(dtype)
    if kind == "f":
        x = np.concatenate([x, np.array([np.nan, np.inf, -np.inf], dtype)])
    cast = (lambda v: v) if kind == "f" else (lambda v: None if v is None else int(v))
    lo, hi = cast(low), cast(high)
    out = np.empty_like(x)
    kernels["clamp"](x, lo, hi, out=out)
    ref = x.astype(np.float64)
    if lo is not None:
        ref = np.maximum(ref, lo)
    if hi is not None:
        ref = np.minimum(ref, hi)  # after lo: hi wins when lo > hi
    np.testing.assert_array_equal(out, ref.astype(dtype))


def test_kit_clamp_kernel_tensor_bounds_broadcast():
    kernels = _example_kernels()
    x = np.array([[-1.0, 0.5, 2.0], [np.nan, 3.0, -3.0]], dtype=np.float32)
    lo = np.array([0.0, np.nan, 1.0], dtype=np.float32)
    out = np.empty_like(x)
    kernels["clamp"](x, lo, 1.5, out=out)
    np.testing.assert_array_equal(out, np.minimum(np.maximum(x, lo), np.float32(1.5)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=20),
       st.floats(-10, 10, width=32), st.floats(-10, 10, width=32))
def test_example_backend_clamp_family_matches_cpu(values, low, high):
    pytest.importorskip("flambeau_example")
    x = np.array(values, dtype=np.float32)
    cpu, ex = fb.from_numpy(x), fb.from_numpy(x).to("example")
    np.testing.assert_array_equal(fb.clamp(ex, low, high).cpu().numpy(), fb.clamp(cpu, low, high).numpy())
    np.testing.assert_array_equal(fb.clamp_min(ex, low).cpu().numpy(), fb.clamp_min(cpu, low).numpy())
    y = np.roll(x, 1)
    np.testing.assert_array_equal(fb.maximum(ex, fb.from_numpy(y).to("example")).cpu().numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(fb.minimum(ex, fb.from_numpy(y).to("example")).cpu().numpy(), np.minimum(x, y))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", [{}, {"nan": 2.0}, {"posinf": 1.0}, {"neginf": -1.0, "nan": -0.5}])
def test_nan_to_num_default_extremes_by_clamp(dtype, kw):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0, -7.5, np.finfo(dtype).max, np.finfo(dtype).min],
                 dtype=dtype)
    got = _decomposed("nan_to_num", fb.from_numpy(x), kw.get("nan", 0.0), kw.get("posinf"), kw.get("neginf"))
    want = np.nan_to_num(x, nan=kw.get("nan", 0.0), posinf=kw.get("posinf"), neginf=kw.get("neginf"))
    assert got.dtype == fb.from_numpy(x).dtype
    np.testing.assert_array_equal(got.numpy(), want)
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(want))


# -- FFTs on the host (numpy.fft), against scipy.fft in float64 ------------------------------------

_FFT_TOL = {"float32": 2e-5, "float64": 1e-12}


def _fft_input(shape, dtype, complex_=False, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(np.result_type(dtype, np.complex64) if complex_ else dtype)


def _close(got, want, dtype):
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=_FFT_TOL[dtype] * scale * 4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
@pytest.mark.parametrize("n, dim", [(None, -1), (5, 0), (12, 1), (1, -1)])
def test_host_fft_1d(dtype, norm, n, dim):
    sfft = pytest.importorskip("scipy.fft")
    real = _fft_input((6, 7), dtype)
    cplx = _fft_input((6, 7), dtype, complex_=True)
    cdt = np.result_type(dtype, np.complex64)
    for name, x, ref in (("fft_fft", cplx, sfft.fft), ("fft_fft", real, sfft.fft), ("fft_ifft", cplx, sfft.ifft),
                         ("fft_rfft", real, sfft.rfft), ("fft_irfft", cplx, sfft.irfft)):
        got = _decomposed(name, fb.from_numpy(x), n, dim, norm).numpy()
        want = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), n, dim, norm or "backward")
        assert got.dtype == (np.dtype(dtype) if name == "fft_irfft" else cdt), name
        assert got.shape == want.shape, name
        _close(got, want, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s, dim", [(None, None), ((4, -1), (0, 2)), ((3, 5), None), (None, (1,)), (None, (2, 0))])
def test_host_fft_nd(dtype, s, dim):
    sfft = pytest.importorskip("scipy.fft")
    real = _fft_input((3, 4, 6), dtype, seed=1)
    cplx = _fft_input((3, 4, 6), dtype, complex_=True, seed=2)
    cdt = np.result_type(dtype, np.complex64)
    axes = dim
    if s is not None:
        base = real.shape
        axes_ = dim if dim is not None else tuple(range(3 - len(s), 3))
        sizes = [base[a] if v == -1 else v for a, v in zip(axes_, s)]
    else:
        axes_, sizes = axes, None
    for name, x, ref, out_dt in (("fft_fftn", cplx, sfft.fftn, cdt), ("fft_ifftn", cplx, sfft.ifftn, cdt),
                                 ("fft_rfftn", real, sfft.rfftn, cdt), ("fft_irfftn", cplx, sfft.irfftn, dtype)):
        got = _decomposed(name, fb.from_numpy(x), s, dim, "ortho").numpy()
        ref_sizes = sizes
        if name == "fft_irfftn" and s is not None and s[-1] == -1:  # PyTorch: -1 there is 2 * (m - 1)
            ref_sizes = sizes[:-1] + [2 * (x.shape[axes_[-1]] - 1)]
        want = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), ref_sizes, axes_, "ortho")
        assert got.dtype == np.dtype(out_dt) and got.shape == want.shape, name
        _close(got, want, dtype)


def test_host_fft_integers_empty_and_non_contiguous():
    sfft = pytest.importorskip("scipy.fft")
    i = np.arange(10, dtype=np.int32).reshape(2, 5)
    got = _decomposed("fft_fft", fb.from_numpy(i), None, -1, None).numpy()
    assert got.dtype == np.complex64  # integers: the default complex dtype
    _close(got, sfft.fft(i.astype(np.float64)), "float32")
    b = np.array([True, False, True])
    assert _decomposed("fft_rfft", fb.from_numpy(b), None, -1, None).dtype == fb.complex64
    t = fb.from_numpy(_fft_input((5, 4), "float64")).t()  # non-contiguous
    _close(_decomposed("fft_fft", t, None, 1, None).numpy(), sfft.fft(t.numpy(), axis=1), "float64")
    e = fb.zeros(0, 4)
    assert _decomposed("fft_fft", e, None, -1, None).shape == (0, 4)
    assert _decomposed("fft_rfftn", e, None, None, None).shape == (0, 3)
    got = _decomposed("fft_fftn", fb.from_numpy(i), None, (), None)  # no axis: the input as complex
    np.testing.assert_array_equal(got.numpy(), i.astype(np.complex64))
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        _decomposed("fft_fft", fb.ones(3), 0, -1, None)
    with pytest.raises(IndexError):
        _decomposed("fft_fft", fb.tensor(1.0), None, -1, None)


def test_host_fft_special_values_propagate():
    x = np.array([1.0, np.inf, 0.0, -0.0], dtype=np.float64)
    got = _decomposed("fft_fft", fb.from_numpy(x), None, -1, None).numpy()
    with np.errstate(invalid="ignore"):
        want = np.fft.fft(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    x = np.array([np.nan, 1.0, 2.0])
    assert np.isnan(_decomposed("fft_rfft", fb.from_numpy(x), None, -1, None).numpy()).all()


def test_fft_composites_run_on_the_example_backend():
    pytest.importorskip("flambeau_example")
    sfft = pytest.importorskip("scipy.fft")
    x = _fft_input((4, 6), "float64", complex_=True, seed=3)
    r = _fft_input((4, 6), "float64", seed=4)
    ex = fb.from_numpy(x).to("example")
    er = fb.from_numpy(r).to("example")
    for got, want in ((fb.fft.fft2(ex), sfft.fft2(x)), (fb.fft.ifft2(ex, s=(3, 8)), sfft.ifft2(x, s=(3, 8))),
                      (fb.fft.rfft2(er), sfft.rfft2(r)), (fb.fft.irfft2(ex), sfft.irfft2(x)),
                      (fb.fft.hfft(ex, 9), sfft.hfft(x, 9)),
                      (fb.fft.ihfft(er, norm="ortho"), sfft.ihfft(r, norm="ortho"))):
        assert got.device.type == "example"
        _close(got.cpu().numpy(), want, "float64")
    for name in ("fft_fft2", "fft_hfft", "fft_ihfft", "fft_irfftn"):
        assert fb.ops.tiers()[name] == "host", name


# -- linalg on the host (numpy only), against scipy.linalg / the maths written out -------------------

def _mats(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


_LA_TOL = {"float32": 1e-4, "float64": 1e-11, "complex64": 1e-4, "complex128": 1e-11}
LA_DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 3, 6, 4), (2, 4, 6), (1, 1), (0, 3, 3)])
def test_host_lu_factor_matches_scipy_and_reconstructs(dtype, shape):
    sla = pytest.importorskip("scipy.linalg")
    A = _mats(shape, dtype)
    LU, piv = (t.numpy() for t in _decomposed("linalg_lu_factor", fb.from_numpy(A), True))
    assert piv.dtype == np.int32 and piv.shape == shape[:-2] + (min(shape[-2:]),)
    flat = A.reshape((-1,) + shape[-2:])
    for i, M in enumerate(flat):
        ref_lu, ref_piv = sla.lu_factor(M)
        np.testing.assert_allclose(LU.reshape(flat.shape)[i], ref_lu, atol=_LA_TOL[dtype] * 10)
        np.testing.assert_array_equal(piv.reshape(len(flat), -1)[i], ref_piv + 1)  # 1-based, as PyTorch
    P, L, U = (t.numpy() for t in _decomposed("linalg_lu", fb.from_numpy(A), True))
    np.testing.assert_allclose(P @ L @ U, A, atol=_LA_TOL[dtype] * 10)
    assert np.allclose(np.triu(L, 1), 0) and np.allclose(np.tril(U, -1), 0)


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_host_lu_solve_every_side_and_adjoint(dtype, left, adjoint):
    A = _mats((2, 5, 5), dtype, seed=1) + 3 * np.eye(5, dtype=dtype)
    B = _mats((2, 5, 3) if left else (2, 3, 5), dtype, seed=2)
    LU, piv = _decomposed("linalg_lu_factor", fb.from_numpy(A), True)
    X = _decomposed("linalg_lu_solve", LU, piv, fb.from_numpy(B), left, adjoint).numpy()
    opA = np.swapaxes(A, -1, -2).conj() if adjoint else A
    np.testing.assert_allclose(opA @ X if left else X @ opA, B, atol=_LA_TOL[dtype] * 20)


def test_host_lu_factor_singular_and_zero_pivot():
    S = fb.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=fb.float64)
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        _decomposed("linalg_lu_factor", S, True)
    P, L, U = _decomposed("linalg_lu", S, True)  # lu does not raise
    np.testing.assert_allclose((P @ L @ U).numpy(), S.numpy())


@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_host_det_slogdet_inv_solve(dtype):
    A = _mats((3, 4, 4), dtype, seed=3) + 2 * np.eye(4, dtype=dtype)
    B = _mats((3, 4, 2), dtype, seed=4)
    tA, tol = fb.from_numpy(A), _LA_TOL[dtype] * 50
    np.testing.assert_allclose(_decomposed("linalg_det", tA).numpy(), np.linalg.det(A.astype(np.complex128)),
                               rtol=tol)
    sign, logabs = _decomposed("linalg_slogdet", tA)
    ref_sign, ref_log = np.linalg.slogdet(A.astype(np.complex128))
    np.testing.assert_allclose(sign.numpy(), ref_sign, atol=tol)
    np.testing.assert_allclose(logabs.numpy(), ref_log, atol=tol)
    assert logabs.dtype == fb.from_numpy(A.real.copy()).dtype
    inv = _decomposed("linalg_inv", tA).numpy()
    np.testing.assert_allclose(inv @ A, np.broadcast_to(np.eye(4), A.shape), atol=tol)
    X = _decomposed("linalg_solve", tA, fb.from_numpy(B), True).numpy()
    np.testing.assert_allclose(A @ X, B, atol=tol)
    Xr = _decomposed("linalg_solve", tA, fb.from_numpy(np.swapaxes(B, -1, -2).copy()), False).numpy()
    np.testing.assert_allclose(Xr @ A, np.swapaxes(B, -1, -2), atol=tol)
    v = _decomposed("linalg_solve", tA, fb.from_numpy(B[..., 0].copy()), True).numpy()  # batched vectors
    np.testing.assert_allclose(np.einsum("bij,bj->bi", A, v), B[..., 0], atol=tol)


def test_host_inv_and_cholesky_errors_name_the_matrix():
    A = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])])
    with pytest.raises(fb.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal element 3 is zero"):
        _decomposed("linalg_inv", fb.from_numpy(A))
    inv, info = _decomposed("linalg_inv_ex", fb.from_numpy(A), False)
    np.testing.assert_array_equal(info.numpy(), [0, 3])
    np.testing.assert_allclose(inv.numpy()[0], np.eye(3))
    assert np.isnan(inv.numpy()[1]).all()
    with pytest.raises(fb.linalg.LinAlgError, match="singular"):
        _decomposed("linalg_solve", fb.from_numpy(A), fb.ones(2, 3, 1, dtype=fb.float64), True)
    S = np.stack([np.eye(3) * 2, np.diag([1.0, -1.0, 1.0])])
    with pytest.raises(fb.linalg.LinAlgError, match=r"Batch element 1\).*leading minor of order 2"):
        _decomposed("linalg_cholesky", fb.from_numpy(S), False)
    L, info = _decomposed("linalg_cholesky_ex", fb.from_numpy(S), False, False)
    np.testing.assert_array_equal(info.numpy(), [0, 2])
    np.testing.assert_allclose(L.numpy()[0], np.eye(3) * np.sqrt(2))


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_host_cholesky_against_numpy(dtype, upper):
    A = _mats((2, 5, 5), dtype, seed=5)
    H = A @ np.swapaxes(A, -1, -2).conj() + 5 * np.eye(5, dtype=dtype)
    L = _decomposed("linalg_cholesky", fb.from_numpy(H), upper).numpy()
    ref = np.linalg.cholesky(H.astype(np.complex128))
    np.testing.assert_allclose(L, np.swapaxes(ref, -1, -2).conj() if upper else ref, atol=_LA_TOL[dtype] * 50)


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("upper, left, unit", [(False, True, False), (True, True, True), (True, False, False),
                                               (False, False, True)])
def test_host_solve_triangular(dtype, upper, left, unit):
    sla = pytest.importorskip("scipy.linalg")
    A = _mats((2, 4, 4), dtype, seed=6) + 4 * np.eye(4, dtype=dtype)
    B = _mats((2, 4, 3) if left else (2, 3, 4), dtype, seed=7)
    X = _decomposed("linalg_solve_triangular", fb.from_numpy(A), fb.from_numpy(B), upper, left, unit).numpy()
    T = np.triu(A) if upper else np.tril(A)
    if unit:
        T[..., range(4), range(4)] = 1
    for i in range(2):
        if left:
            ref = sla.solve_triangular(T[i], B[i], lower=not upper)
        else:
            ref = sla.solve_triangular(T[i].T, B[i].T, lower=upper).T
        np.testing.assert_allclose(X[i], ref, atol=_LA_TOL[dtype] * 50)
    Z = fb.from_numpy(np.zeros((2, 2)))
    out = _decomposed("linalg_solve_triangular", Z, fb.ones(2, 1, dtype=fb.float64), True, True, False).numpy()
    assert not np.isfinite(out).any()  # a zero diagonal: inf/NaN, no error (PyTorch)


@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_host_eig_eigh_svd_qr(dtype):
    A = _mats((2, 4, 4), dtype, seed=8)
    tol = _LA_TOL[dtype] * 100
    w, v = (t.numpy() for t in _decomposed("linalg_eig", fb.from_numpy(A)))
    np.testing.assert_allclose(A @ v, v * w[..., None, :], atol=tol)
    np.testing.assert_allclose(np.sort_complex(_decomposed("linalg_eigvals", fb.from_numpy(A)).numpy().ravel()),
                               np.sort_complex(w.ravel()), atol=tol)
    H = A + np.swapaxes(A, -1, -2).conj()
    w, v = (t.numpy() for t in _decomposed("linalg_eigh", fb.from_numpy(H), "L"))
    assert w.dtype == np.dtype(dtype).type(0).real.dtype
    assert (np.diff(w, axis=-1) >= 0).all()
    np.testing.assert_allclose(H @ v, v * w[..., None, :], atol=tol)
    R = _mats((2, 5, 3), dtype, seed=9)
    U, S, Vh = (t.numpy() for t in _decomposed("linalg_svd", fb.from_numpy(R), False, None))
    np.testing.assert_allclose((U * S[..., None, :]) @ Vh, R, atol=tol)
    np.testing.assert_allclose(_decomposed("linalg_svdvals", fb.from_numpy(R), None).numpy(), S, atol=tol)
    U, S, Vh = _decomposed("linalg_svd", fb.from_numpy(R), True, None)
    assert U.shape == (2, 5, 5) and Vh.shape == (2, 3, 3)
    for mode, qshape in (("reduced", (2, 5, 3)), ("complete", (2, 5, 5))):
        Q, Rr = (t.numpy() for t in _decomposed("linalg_qr", fb.from_numpy(R), mode))
        assert Q.shape == qshape
        np.testing.assert_allclose(Q @ Rr, R, atol=tol)


def test_host_linalg_empty_matrices():
    E = fb.zeros(2, 0, 0, dtype=fb.float64)
    np.testing.assert_array_equal(_decomposed("linalg_det", E).numpy(), [1.0, 1.0])
    assert _decomposed("linalg_inv", E).shape == (2, 0, 0)
    U, S, Vh = _decomposed("linalg_svd", fb.zeros(3, 0, dtype=fb.float64), True, None)
    np.testing.assert_array_equal(U.numpy(), np.eye(3))
    LU, piv = _decomposed("linalg_lu_factor", fb.zeros(0, 3, 3), True)
    assert LU.shape == (0, 3, 3) and piv.shape == (0, 3)


@pytest.mark.parametrize("driver", [None, "gels", "gelsd"])
def test_host_lstsq(driver):
    A = _mats((2, 6, 3), "float64", seed=10)
    B = _mats((2, 6, 2), "float64", seed=11)
    sol, res, rank, sv = _decomposed("linalg_lstsq", fb.from_numpy(A), fb.from_numpy(B), None, driver)
    for i in range(2):
        np.testing.assert_allclose(sol.numpy()[i], np.linalg.lstsq(A[i], B[i], rcond=None)[0], atol=1e-10)
    assert rank.numel() == (0 if driver == "gels" else 2)
    assert sv.numel() == (6 if driver == "gelsd" else 0)
    assert res.numel() == (0 if driver is None else 4)


def test_linalg_composites_and_norm_on_the_example_backend():
    pytest.importorskip("flambeau_example")
    sla = pytest.importorskip("scipy.linalg")
    A = _mats((3, 3), "float64", seed=12) + 3 * np.eye(3)
    ex = fb.from_numpy(A).to("example")
    for got, want in ((fb.linalg.pinv(ex), np.linalg.pinv(A)), (fb.linalg.matrix_norm(ex, "nuc"),
                                                                np.linalg.norm(A, "nuc")),
                      (fb.linalg.matrix_rank(ex), 3), (fb.linalg.matrix_power(ex, 3), A @ A @ A),
                      (fb.matrix_exp(ex), sla.expm(A)), (fb.linalg.eigvalsh(ex + ex.mT), np.linalg.eigvalsh(A + A.T)),
                      (fb.norm(ex, "nuc"), np.linalg.norm(A, "nuc")), (fb.norm(ex), np.linalg.norm(A)),
                      (fb.norm(ex, 3, 1, True), np.sum(np.abs(A) ** 3, 1, keepdims=True) ** (1 / 3))):
        assert got.device.type == "example"
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-9, atol=1e-9)
    for name in ("linalg_pinv", "linalg_matrix_rank", "matrix_exp", "norm", "linalg_lu_solve"):
        assert fb.ops.tiers()[name] == "host", name

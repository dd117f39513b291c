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

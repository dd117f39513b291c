"""flambeau.backend_kit: the core tier's kernels for any numpy-like array module, run with numpy as ``xp``.

The kernels are checked here directly (natives in, ``out`` preallocated, as the dispatcher calls
them), against numpy computing the same thing or the value written out; the conformance kit runs
them again through the whole API on the ``example`` and ``cuda`` (test double) backends.
"""
from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau
from flambeau import backend_kit as kit
from flambeau.ops import declarations
from flambeau.ops._registry import kernel_mismatch

# -- a numpy "device": its storage and random engine, as a backend writes them -----------------


class NumpyStorage:
    """Every native a strided view of a flat numpy storage (the example backend's model), counting
    the allocations the kernels make."""

    def __init__(self) -> None:
        self.allocated = 0

    @staticmethod
    def root(a):
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a

    def allocate(self, shape, dtype):
        self.allocated += 1
        flat = np.empty(math.prod(shape), dtype)
        return self.strided(flat, shape, kit.contiguous_strides(tuple(shape)), 0)

    def offset_of(self, a):
        return (a.__array_interface__["data"][0] - self.root(a).__array_interface__["data"][0]) // a.itemsize

    @staticmethod
    def strides_of(a):
        return tuple(s // a.itemsize for s in a.strides)

    def strided(self, a, shape, strides, offset, dtype=None):
        r = self.root(a)
        dtype = a.dtype if dtype is None else np.dtype(dtype)
        offset = min(offset, r.nbytes // dtype.itemsize)
        return np.ndarray(tuple(shape), dtype, buffer=r, offset=offset * dtype.itemsize,
                          strides=tuple(s * dtype.itemsize for s in strides))

    @staticmethod
    def shares_memory(a, b):
        return np.may_share_memory(a, b)


def make(**options):
    storage = NumpyStorage()
    rng = np.random.default_rng(0)
    kernels = kit.make_core_kernels(np, storage, lambda generator, out: rng, erf=kit.host_erf, **options)
    return kernels, storage


K, STORAGE = make()


def device(values, dtype=None):
    """A native: a contiguous view of a fresh flat storage."""
    host = np.asarray(values, dtype=dtype)
    out = STORAGE.allocate(host.shape, host.dtype)
    out[...] = host
    return out


def run(name, *args, shape, dtype, **kwargs):
    out = STORAGE.allocate(tuple(shape), np.dtype(dtype))
    K[name](*args, **kwargs, out=out)
    return out


# -- what the kit builds ----------------------------------------------------------------------


def test_the_kernels_are_the_core_tier_and_fit_its_declarations():
    core = {name: d for name, d in declarations().items() if d.tier == "core"}
    assert set(K) == set(core)
    for name, kernel in K.items():
        assert kernel_mismatch(core[name], kernel) is None, name


def test_a_storage_module_serves_as_well_as_an_object():
    # ArrayStorage is a protocol: a module of functions (the example backend's _storage) fits it
    module = type(sys)("storage_module")
    s = NumpyStorage()
    for name in ("allocate", "offset_of", "strides_of", "strided", "shares_memory"):
        setattr(module, name, getattr(s, name))
    kernels = kit.make_core_kernels(np, module, lambda g, out: None, erf=kit.host_erf)
    out = s.allocate((2,), np.dtype(np.float64))
    kernels["add"](device([1.0, 2.0]), 3.0, 1, out=out)
    assert out.tolist() == [4.0, 5.0]


def test_the_kit_imports_numpy_and_nothing_else_of_flambeau():
    from flambeau.testing._import_graph import import_graph

    graph = import_graph(Path(flambeau.__file__).parent, "flambeau")
    for module in sorted(m for m in graph.modules if m.startswith("flambeau.backend_kit")):
        targets = graph.module_level[module] | graph.function_level[module]
        assert {t for t in targets if not t.startswith("flambeau.backend_kit")} <= {"flambeau"}, module


def test_import_flambeau_does_not_load_the_kit():
    code = "import sys, flambeau; flambeau.ones(1); print('flambeau.backend_kit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- numbers and strides ----------------------------------------------------------------------


def test_fitted_wraps_integers_into_narrow_dtypes_only():
    assert kit.fitted(-1, np.dtype(np.uint8)) == 255
    assert kit.fitted(300, np.dtype(np.int8)) == 44
    assert kit.fitted(200, np.dtype(np.int8)) == -56
    assert kit.fitted(2 ** 63, np.dtype(np.int64)) == -(2 ** 63)
    assert kit.fitted(True, np.dtype(np.uint8)) is True
    assert kit.fitted(1.5, np.dtype(np.uint8)) == 1.5
    assert kit.fitted(-1, np.dtype(np.float32)) == -1


def test_work_dtype_and_floating():
    assert kit.work_dtype(np.dtype(np.float16)) == np.float32
    assert kit.work_dtype(np.dtype(np.int16)) == np.int16
    assert kit.is_floating(np.dtype(np.complex64)) and kit.is_floating(np.dtype(np.float16))
    assert not kit.is_floating(np.dtype(np.int64)) and not kit.is_floating(np.dtype(bool))


def test_comparison_dtype_keeps_scalars_weak():
    i8, b = np.dtype(np.int8), np.dtype(bool)
    assert kit.comparison_dtype([i8], [3]) == i8
    assert kit.comparison_dtype([i8], [2.5]) == np.float64
    assert kit.comparison_dtype([i8], [1j]) == np.complex128
    assert kit.comparison_dtype([b], [2]) == np.int64
    assert kit.comparison_dtype([i8, np.dtype(np.float16)], []) == np.float32  # computed in float32


def test_contiguous_strides():
    assert kit.contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert kit.contiguous_strides((2, 0, 3)) == (3, 3, 1)
    assert kit.contiguous_strides(()) == ()


def test_view_strides_of_a_non_contiguous_layout():
    # a (4, 6) transposed to (6, 4), strides (1, 6): its (6, 2, 2) view splits the contiguous-free dim
    assert kit.view_strides((6, 4), (1, 6), (6, 2, 2)) == (1, 12, 6)
    assert kit.view_strides((2, 3), (3, 1), (6,)) == (1,)
    with pytest.raises(ValueError):
        kit.view_strides((6, 4), (1, 6), (24,))  # needs a copy: no view


# -- arithmetic -----------------------------------------------------------------------------------


def test_add_sub_mul_with_alpha_scalars_and_bool():
    a, b = device([1.0, 2.0, 3.0]), device([10.0, 20.0, 30.0])
    assert run("add", a, b, 2, shape=(3,), dtype=np.float64).tolist() == [21.0, 42.0, 63.0]
    assert run("sub", a, 1, 1, shape=(3,), dtype=np.float64).tolist() == [0.0, 1.0, 2.0]
    assert run("mul", a, b, shape=(3,), dtype=np.float64).tolist() == [10.0, 40.0, 90.0]
    t, f = device([True, False]), device([True, True])
    assert run("add", t, f, 1, shape=(2,), dtype=bool).tolist() == [True, True]
    assert run("mul", t, f, shape=(2,), dtype=bool).tolist() == [True, False]
    # an integer scalar outside uint8's range wraps, as on the CPU: 250 + 10 = 4, 3 + 266 (10) = 13
    assert run("add", device([250, 3], np.uint8), 266, 1, shape=(2,), dtype=np.uint8).tolist() == [4, 13]


def test_add_may_write_into_its_own_input():
    a = device([1.0, 2.0])
    K["add"](a, a, 1, out=a)
    assert a.tolist() == [2.0, 4.0]


def test_integer_division_by_zero_and_rounding_modes():
    a, b = device([-7, 7, -8], np.int64), device([2, -2, 4], np.int64)
    assert run("div", a, b, "trunc", shape=(3,), dtype=np.int64).tolist() == [-3, -3, -2]
    assert run("div", a, b, "floor", shape=(3,), dtype=np.int64).tolist() == [-4, -4, -2]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run("div", a, device([1, 0, 1], np.int64), "trunc", shape=(3,), dtype=np.int64)


def test_float_floor_division_as_pytorch():
    a, b = device([-7.0, 7.0, 1.0, -0.0, 5.0]), device([2.0, -2.0, 0.0, 3.0, 0.5])
    r = run("div", a, b, "floor", shape=(5,), dtype=np.float64)
    assert r[:3].tolist() == [-4.0, -4.0, math.inf]
    assert r[3] == 0 and math.copysign(1, r[3]) == -1  # -0.0 keeps its sign
    assert r[4] == 10.0
    assert run("div", a, b, None, shape=(5,), dtype=np.float64)[0] == -3.5


def test_integer_pow_refuses_negative_exponents():
    with pytest.raises(RuntimeError, match="negative integer powers"):
        run("pow", device([2, 3], np.int32), -1, shape=(2,), dtype=np.int32)
    assert run("pow", device([2, 3], np.int32), 3, shape=(2,), dtype=np.int32).tolist() == [8, 27]


def test_half_types_compute_in_float32_and_round_once():
    # 2048 + 1 + 1 in float16 steps is 2048 (each +1 rounds to even); in float32, 2050, which float16 holds
    x = device([2048.0, 1.0, 1.0], np.float16)
    assert run("sum", x, None, False, None, shape=(), dtype=np.float16) == 2050
    row, col = device([[2048.0, 1.0, 1.0]], np.float16), device([[1.0], [1.0], [1.0]], np.float16)
    assert run("mm", row, col, shape=(1, 1), dtype=np.float16)[0, 0] == 2050
    # 2049 rounds to 2048 at the store; the running sum itself stays exact in float32
    assert run("cumsum", x, 0, None, shape=(3,), dtype=np.float16).tolist() == [2048, 2048, 2050]


def test_unary_math_and_rounding():
    x = device([0.25, 1.5, 2.5, -0.5])
    np.testing.assert_allclose(run("exp", x, shape=(4,), dtype=np.float64), np.exp(x))
    np.testing.assert_allclose(run("sqrt", device([4.0, 9.0]), shape=(2,), dtype=np.float64), [2.0, 3.0])
    assert run("round", x, 0, shape=(4,), dtype=np.float64).tolist() == [0.0, 2.0, 2.0, -0.0]  # half to even
    assert run("round", device([1.234]), 2, shape=(1,), dtype=np.float64).tolist() == [1.23]
    assert run("floor", x, shape=(4,), dtype=np.float64).tolist() == [0.0, 1.0, 2.0, -1.0]
    assert run("floor", device([3], np.int64), shape=(1,), dtype=np.int64).tolist() == [3]
    assert run("neg", device([1, -2], np.int8), shape=(2,), dtype=np.int8).tolist() == [-1, 2]
    assert run("abs", device([-1.5, 2.0]), shape=(2,), dtype=np.float64).tolist() == [1.5, 2.0]
    assert run("atan2", device([1], np.int8), device([1], np.int8), shape=(1,), dtype=np.float16)[0] == \
        np.float16(math.pi / 4)


def test_erf_uses_the_backends_function_and_refuses_complex():
    seen = []
    storage = NumpyStorage()
    kernels = kit.make_core_kernels(np, storage, lambda g, out: None, erf=lambda x: seen.append(x.dtype) or x * 0)
    out = storage.allocate((2,), np.dtype(np.float16))
    kernels["erf"](device([0.5, 1.0], np.float16), out=out)
    assert seen == [np.float32] and out.tolist() == [0.0, 0.0]
    np.testing.assert_allclose(run("erf", device([0.5, -1.0]), shape=(2,), dtype=np.float64),
                               [math.erf(0.5), math.erf(-1.0)], rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="not implemented for complex"):
        run("erf", device([1j]), shape=(1,), dtype=np.complex128)


def test_floating_point_errors_do_not_warn_with_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(run("log", device([-1.0]), shape=(1,), dtype=np.float64)[0])
        assert run("div", device([1.0]), device([0.0]), None, shape=(1,), dtype=np.float64)[0] == math.inf
        run("to_dtype", device([math.nan, 1e10]), np.int32, shape=(2,), dtype=np.int32)  # a C cast: no warning
        assert run("add", device([60000.0], np.float16), 60000.0, 1, shape=(1,), dtype=np.float16)[0] == math.inf


def test_floating_point_errors_warn_when_asked_to():
    kernels, storage = make(ignore_float_errors=False)
    out = storage.allocate((1,), np.dtype(np.float64))
    with pytest.warns(RuntimeWarning):
        kernels["log"](device([-1.0]), out=out)


# -- comparisons, selection, bitwise ----------------------------------------------------------------


def test_comparisons_with_weak_scalars():
    x = device([250, 3], np.uint8)
    assert run("lt", x, 1000, shape=(2,), dtype=bool).tolist() == [False, True]  # 1000 wraps to 232
    assert run("gt", x, 2.5, shape=(2,), dtype=bool).tolist() == [True, True]
    assert run("eq", device([1.0, 2.0]), device([1.0, 3.0]), shape=(2,), dtype=bool).tolist() == [True, False]
    assert run("ne", device([True, False]), 2, shape=(2,), dtype=bool).tolist() == [True, True]


def test_where_and_bitwise():
    c = device([True, False, True])
    assert run("where", c, device([1, 2, 3], np.int64), 0, shape=(3,), dtype=np.int64).tolist() == [1, 0, 3]
    a, b = device([0b1100], np.uint8), device([0b1010], np.uint8)
    assert run("bitwise_and", a, b, shape=(1,), dtype=np.uint8).tolist() == [0b1000]
    assert run("bitwise_or", a, b, shape=(1,), dtype=np.uint8).tolist() == [0b1110]
    assert run("bitwise_xor", a, b, shape=(1,), dtype=np.uint8).tolist() == [0b0110]
    assert run("bitwise_not", a, shape=(1,), dtype=np.uint8).tolist() == [0b11110011]


# -- reductions ------------------------------------------------------------------------------------------


def test_reductions_over_dims():
    x = device(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(run("sum", x, (0, -1), True, None, shape=(1, 3, 1), dtype=np.float64),
                                  x.sum((0, 2), keepdims=True))
    np.testing.assert_array_equal(run("prod", x, 1, False, None, shape=(2, 4), dtype=np.float64), x.prod(1))
    assert run("amax", x, None, False, shape=(), dtype=np.float64) == 23
    assert run("amin", x, [], False, shape=(), dtype=np.float64) == 0  # () means every dim
    np.testing.assert_array_equal(run("argmax", x, -1, True, shape=(2, 3, 1), dtype=np.int64), 3)
    assert run("argmin", x, None, False, shape=(), dtype=np.int64) == 0
    assert run("argmax", device(5.0), None, False, shape=(), dtype=np.int64) == 0
    np.testing.assert_array_equal(run("cumsum", x, -2, None, shape=(2, 3, 4), dtype=np.float64), x.cumsum(1))


# -- views ---------------------------------------------------------------------------------------------------


def test_views_share_the_storage_with_pytorchs_strides():
    x = device(np.arange(24.0).reshape(2, 3, 4))
    for name, args, expected in [
        ("transpose", (0, -1), x.transpose(2, 1, 0)),
        ("permute", ((1, 2, 0),), x.transpose(1, 2, 0)),
        ("expand", ((5, -1, 3, 4),), np.broadcast_to(x, (5, 2, 3, 4))),
        ("select", (1, -1), x[:, 2]),
        ("basic_index", ((slice(None), None, 1, slice(1, 4, 2)),), x[:, None, 1, 1:4:2]),
        ("unfold", (2, 2, 2), np.lib.stride_tricks.sliding_window_view(x, 2, axis=2)[:, :, ::2]),
        ("view", ((4, -1),), x.reshape(4, 6)),
        ("squeeze", (None,), x),
        ("_conj", (), x),
    ]:
        v = K[name](x, *args)
        np.testing.assert_array_equal(v, expected, err_msg=name)
        assert np.shares_memory(v, x), name
    assert K["unsqueeze"](x, 1).shape == (2, 1, 3, 4) and STORAGE.strides_of(K["unsqueeze"](x, 1)) == (12, 12, 4, 1)
    assert K["unsqueeze"](x, -1).shape == (2, 3, 4, 1) and STORAGE.strides_of(K["unsqueeze"](x, -1))[-1] == 1
    s = K["as_strided"](x, (2, 2), (1, 4), 3)
    assert s.tolist() == [[3.0, 7.0], [4.0, 8.0]]


def test_view_of_a_transposed_tensor_and_of_an_empty_one():
    x = K["transpose"](device(np.arange(24.0).reshape(4, 6)), 0, 1)  # (6, 4), strides (1, 6)
    v = K["view"](x, (6, 2, 2))
    np.testing.assert_array_equal(v, np.asarray(x).reshape(6, 2, 2))
    assert STORAGE.strides_of(v) == (1, 12, 6)
    e = K["view"](device(np.zeros((0, 3))), (3, 0))
    assert e.shape == (3, 0) and STORAGE.strides_of(e) == (1, 1)


def test_view_as_real_and_back():
    z = device([1 + 2j, 3 - 4j], np.complex64)
    r = K["view_as_real"](z)
    assert r.dtype == np.float32 and r.tolist() == [[1, 2], [3, -4]]
    r[1, 1] = 5
    assert z[1] == 3 + 5j
    back = K["view_as_complex"](K["select"](K["view_as_real"](z), 0, 1))
    assert back.shape == () and back == 3 + 5j


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4), data=st.data())
def test_basic_index_matches_numpy(shape, data):
    x = device(np.arange(math.prod(shape), dtype=np.int64).reshape(shape))
    index, d = [], 0
    while d < len(shape) and data.draw(st.booleans()):
        n = shape[d]
        kind = data.draw(st.sampled_from(["int", "slice", "none"] if n else ["slice", "none"]))
        if kind == "int":
            index.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start, stop, step = (data.draw(st.integers(lo, hi)) for lo, hi in ((0, n), (0, n), (1, 3)))
            index.append(slice(start, stop, step))
        else:
            index.append(None)
        d += kind != "none"
    got = K["basic_index"](x, tuple(index))
    np.testing.assert_array_equal(got, x[tuple(index)])
    assert got.size == 0 or np.shares_memory(got, x)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3), data=st.data(),
       dtype=st.sampled_from([np.int8, np.int64, np.float16, np.float32, np.float64, np.complex128]))
def test_binary_kernels_broadcast_as_numpy(shape, data, dtype):
    # each operand keeps a dim or has 1 there; the second may also drop leading dims
    a = [n if data.draw(st.booleans()) else 1 for n in shape]
    b = [n if data.draw(st.booleans()) else 1 for n in shape][data.draw(st.integers(0, len(shape))):]
    x = device(np.arange(1, 1 + math.prod(a)).reshape(a) % 7, dtype)
    y = device((np.arange(math.prod(b)).reshape(b) % 5) + 1, dtype)
    shape = np.broadcast_shapes(x.shape, y.shape)
    np.testing.assert_array_equal(run("add", x, y, 1, shape=shape, dtype=dtype), x + y)
    np.testing.assert_array_equal(run("mul", x, y, shape=shape, dtype=dtype), x * y)
    np.testing.assert_array_equal(run("le", x, y, shape=shape, dtype=bool), x <= y)


# -- copy, fill, gather, scatter ----------------------------------------------------------------------------


def test_copy_from_an_overlapping_view_fill_and_cast():
    x = device([1.0, 2.0, 3.0, 4.0])
    K["copy"](K["as_strided"](x, (3,), (1,), 1), K["as_strided"](x, (3,), (1,), 0),
              out=K["as_strided"](x, (3,), (1,), 1))
    assert x.tolist() == [1.0, 1.0, 2.0, 3.0]  # the source read before it was overwritten
    u = device([0, 0], np.uint8)
    K["copy"](u, -1, out=u)
    assert u.tolist() == [255, 255]
    K["fill"](u, device(300), out=u)
    assert u.tolist() == [44, 44]
    f = device([0.0])
    K["fill"](f, device(2 + 3j), out=f)
    assert f.tolist() == [2.0]
    assert run("to_dtype", device([1.7, -1.7]), np.int8, shape=(2,), dtype=np.int8).tolist() == [1, -1]


def test_gather_and_scatter_check_their_indices():
    x = device([[1, 2], [3, 4]], np.int64)
    idx = device([[1, 0], [0, 0]], np.int64)
    assert run("gather", x, 1, idx, False, shape=(2, 2), dtype=np.int64).tolist() == [[2, 1], [3, 3]]
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 1 with size 2"):
        run("gather", x, 1, device([[2, 0]], np.int64), False, shape=(1, 2), dtype=np.int64)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 2"):
        run("scatter", x, 0, device([[-1, 0]], np.int64), None, 0, None, shape=(2, 2), dtype=np.int64)
    r = run("scatter", x, 0, device([[1, 1]], np.int64), None, 9, None, shape=(2, 2), dtype=np.int64)
    assert r.tolist() == [[1, 2], [9, 9]] and x.tolist() == [[1, 2], [3, 4]]  # the input left as it was


def test_scatter_reductions_accumulate_repeated_indices_through_the_hook():
    calls = []

    def scatter_at(name, result, key, values):
        calls.append(name)
        getattr(np, name).at(result, key, values)
        return result

    kernels, storage = make(scatter_at=scatter_at)
    x, idx, src = device([0.0, 0.0, 1.0]), device([0, 0, 2, 0], np.int64), device([1.0, 2.0, 3.0, 4.0])
    out = storage.allocate((3,), np.dtype(np.float64))
    kernels["scatter_add"](x, 0, idx, src, out=out)
    assert out.tolist() == [7.0, 0.0, 4.0]
    kernels["scatter"](device([1.0, 1.0, 1.0]), 0, idx, None, 2.0, "multiply", out=out)
    assert out.tolist() == [8.0, 1.0, 2.0]
    assert calls == ["add", "multiply"]


# -- random, arange, nonzero ---------------------------------------------------------------------------------


def test_uniform_stays_below_its_bound_in_a_narrow_dtype():
    class Top:  # an engine whose draws are all just under 1: scaled, they round up to `to` in float16
        def random(self, size, dtype):
            return np.full(size, np.nextafter(np.float32(1), np.float32(0)), dtype)

    storage = NumpyStorage()
    kernels = kit.make_core_kernels(np, storage, lambda g, out: Top(), erf=kit.host_erf)
    out = storage.allocate((3,), np.dtype(np.float16))
    kernels["uniform"](out, 0.0, 1.0, None, out=out)
    assert (out < 1).all() and out[0] == np.nextafter(np.float16(1), np.float16(0))


def test_random_bounds_per_dtype():
    for dtype, top in ((bool, 1), (np.uint8, 255), (np.float16, 2 ** 11)):
        out = run("random", None, 0, None, None, shape=(2000,), dtype=dtype)
        assert out.min() >= 0 and out.max() <= top and out.max() > top / 2
    out = run("random", None, -3, 3, None, shape=(500,), dtype=np.int8)
    assert set(out.tolist()) == {-3, -2, -1, 0, 1, 2}


def test_uniform_complex_draws_both_parts():
    out = run("uniform", None, 2.0, 3.0, None, shape=(100,), dtype=np.complex128)
    assert (2 <= out.real).all() and (out.real < 3).all() and (2 <= out.imag).all() and (out.imag < 3).all()


def test_arange_and_nonzero():
    assert run("arange", 2, 11, 3, None, None, False, shape=(3,), dtype=np.int32).tolist() == [2, 5, 8]
    np.testing.assert_allclose(run("arange", 0.5, 1.0, 0.25, None, None, False, shape=(2,), dtype=np.float32),
                               [0.5, 0.75])
    x = device([[0, 1], [2, 0]], np.int64)
    before = STORAGE.allocated
    coords = K["nonzero"](x, False)
    assert coords.tolist() == [[0, 1], [1, 0]] and coords.dtype == np.int64
    rows, cols = K["nonzero"](x, True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert STORAGE.allocated - before == 4  # each result in a storage of its own (one, then two and their source)
    assert K["nonzero"](device(3.0), False).shape == (1, 0)
    assert [t.tolist() for t in K["nonzero"](device(0.0), True)] == [[]]

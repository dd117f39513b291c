"""The C++ reductions (flambeau_cpu._C.reduce) against numpy's float64 results, over dims and layouts."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from _arrays import FLOATS, layouts, make
from hypothesis import given, settings
from hypothesis import strategies as st

from flambeau_cpu import _C

NUMPY = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}


def _expected_shape(shape, dims, keepdim):
    return tuple(1 if d in dims else s for d, s in enumerate(shape) if keepdim or d not in dims)


def _check(op, x, dims, keepdim, out):
    """Compares out with numpy's float64 reduction: sums within float32/64 rounding of sum(|x|)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "Mean of empty slice"
        ref = NUMPY[op](x.astype(np.float64), axis=tuple(dims), keepdims=keepdim)
        scale = np.sum(np.abs(x.astype(np.float64)), axis=tuple(dims), keepdims=keepdim)
    ref = np.broadcast_to(ref, out.shape)
    if op in ("amax", "amin"):
        np.testing.assert_array_equal(out, ref.astype(x.dtype))
        return
    if op == "mean":
        n = int(np.prod([x.shape[d] for d in dims]))
        scale = scale / max(n, 1)
    eps = np.finfo(x.dtype).eps
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(out[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    err = np.abs(out[finite].astype(np.float64) - ref[finite])
    assert np.all(err <= 4 * eps * (np.abs(ref[finite]) + np.broadcast_to(scale, out.shape)[finite]) + 1e-300)


@st.composite
def reduce_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    op = draw(st.sampled_from(tuple(NUMPY)))
    shape = draw(st.lists(st.integers(0 if op in ("sum", "mean") else 1, 6), min_size=0, max_size=4).map(tuple))
    dims = sorted(draw(st.sets(st.integers(0, len(shape) - 1))) if shape else set())
    keepdim = draw(st.booleans())
    out_shape = _expected_shape(shape, dims, keepdim)
    return (dtype, op, shape, dims, keepdim, draw(st.one_of(st.none(), layouts(shape))),
            draw(st.one_of(st.none(), layouts(out_shape))), draw(st.booleans()), draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=300, deadline=None)
@given(reduce_cases())
def test_reduce_matches_numpy(case):
    dtype, op, shape, dims, keepdim, lx, lo, specials, seed = case
    rng = np.random.default_rng(seed)
    x = make(rng, shape, dtype, lx, specials=specials)
    out = make(rng, _expected_shape(shape, dims, keepdim), dtype, lo, specials=False)
    assert _C.reduce(_C.REDUCE_OPS[op], x, out, dims, keepdim) is True
    _check(op, x, dims, keepdim, out)


# Shapes that reach each parallel strategy: many outputs per thread, or few outputs whose reduced
# elements are split over threads, with the reduced dim innermost or outermost.
BIG = [((2000, 300), [1]), ((2000, 300), [0]), ((3, 200_000), [1]), ((200_000, 3), [0]), ((1_000_000,), [0]),
       ((50, 40, 60), [0, 2]), ((50, 40, 60), [1]), ((64, 2, 2000), [0, 1])]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("shape,dims", BIG)
@pytest.mark.parametrize("op", ["sum", "amax"])
def test_large_reductions(threads, shape, dims, op):
    old = _C.get_num_threads()
    _C.set_num_threads(threads)
    try:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape).astype(np.float32)
        for view in (x, np.flip(x, -1)):
            out = np.empty(_expected_shape(shape, dims, False), np.float32)
            assert _C.reduce(_C.REDUCE_OPS[op], view, out, dims, False)
            _check(op, view, dims, False, out)
    finally:
        _C.set_num_threads(old)


def test_float32_sum_is_accurate():
    """16M float32 values: the result is float32's rounding of the exact sum (double accumulation)."""
    x = np.full(1 << 24, 0.1, np.float32)
    out = np.empty((), np.float32)
    _C.reduce(_C.REDUCE_OPS["sum"], x, out, [0], False)
    exact = float(np.float64(np.float32(0.1))) * (1 << 24)
    assert abs(float(out) - exact) <= abs(exact) * 6e-8


def test_nan_propagates_through_max_and_min():
    x = np.arange(100_000, dtype=np.float64).reshape(10, -1)
    x[3, 17] = np.nan
    for op in ("amax", "amin", "sum"):
        out = np.empty(10)
        _C.reduce(_C.REDUCE_OPS[op], x, out, [1], False)
        assert np.isnan(out[3]) and not np.isnan(np.delete(out, 3)).any()


def test_empty_reductions():
    x = np.empty((3, 0), np.float32)
    out = np.empty(3, np.float32)
    _C.reduce(_C.REDUCE_OPS["sum"], x, out, [1], False)
    np.testing.assert_array_equal(out, 0)
    _C.reduce(_C.REDUCE_OPS["mean"], x, out, [1], False)
    assert np.isnan(out).all()
    with pytest.raises(ValueError, match="empty"):
        _C.reduce(_C.REDUCE_OPS["amax"], x, out, [1], False)


@st.composite
def arg_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4).map(tuple))
    dim = draw(st.integers(0, len(shape) - 1))
    keepdim = draw(st.booleans())
    out_shape = _expected_shape(shape, [dim], keepdim)
    return (dtype, shape, dim, keepdim, draw(st.one_of(st.none(), layouts(shape))),
            draw(st.one_of(st.none(), layouts(out_shape))), draw(st.booleans()), draw(st.booleans()),
            draw(st.integers(0, 2**32 - 1)))


def _torch_arg(x, dim, is_max):
    """PyTorch's index: the first NaN if any, else the first extreme (numpy's argmax agrees)."""
    return (np.argmax if is_max else np.argmin)(x, axis=dim)


@settings(max_examples=200, deadline=None)
@given(arg_cases())
def test_arg_reduce_matches_numpy(case):
    dtype, shape, dim, keepdim, lx, lo, is_max, ties, seed = case
    rng = np.random.default_rng(seed)
    x = make(rng, shape, dtype, lx, specials=True)
    if ties:  # few distinct values: ties must go to the first index
        x[...] = np.round(x.clip(-2, 2))
    out_shape = _expected_shape(shape, [dim], keepdim)
    values = make(rng, out_shape, dtype, lo, specials=False)
    indices = np.full(out_shape, -1, np.int64)
    assert _C.arg_reduce(is_max, x, values, indices, dim, keepdim) is True
    expected = np.expand_dims(_torch_arg(x, dim, is_max), dim) if keepdim else _torch_arg(x, dim, is_max)
    np.testing.assert_array_equal(indices, expected)
    taken = np.take_along_axis(x, np.expand_dims(expected, dim) if not keepdim else expected, axis=dim)
    np.testing.assert_array_equal(values, taken.reshape(out_shape))
    only = np.full(out_shape, -1, np.int64)
    assert _C.arg_reduce(is_max, x, None, only, dim, keepdim)
    np.testing.assert_array_equal(only, expected)


@pytest.mark.parametrize("shape,dim", [((3000, 40), 0), ((40, 3000), 1), ((20, 30, 200), 1), ((100_000, 2), 0)])
def test_large_arg_reduce(shape, dim):
    x = np.random.default_rng(2).standard_normal(shape)
    x[1, 1] = np.nan
    values = np.empty(_expected_shape(shape, [dim], False))
    indices = np.empty(values.shape, np.int64)
    assert _C.arg_reduce(False, x, values, indices, dim, False)
    np.testing.assert_array_equal(indices, np.argmin(x, axis=dim))
    np.testing.assert_array_equal(values, np.min(x, axis=dim))


def test_arg_reduce_bad_arguments():
    x = np.ones((3, 4))
    with pytest.raises(IndexError):
        _C.arg_reduce(True, x, None, np.empty(3, np.int64), 2, False)
    with pytest.raises(ValueError):
        _C.arg_reduce(True, x, None, np.empty(4, np.int64), 1, False)
    with pytest.raises(TypeError):
        _C.arg_reduce(True, x, None, np.empty(3, np.int32), 1, False)
    with pytest.raises(TypeError):
        _C.arg_reduce(True, x, np.empty(3, np.float32), np.empty(3, np.int64), 1, False)
    with pytest.raises(ValueError, match="empty"):
        _C.arg_reduce(True, np.ones((3, 0)), None, np.empty(3, np.int64), 1, False)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 300), where=st.lists(st.integers(0, 299), max_size=3),
       special=st.sampled_from([np.nan, np.inf, -np.inf]), dtype=st.sampled_from([np.float32, np.float64]),
       op=st.sampled_from(["amax", "amin"]), seed=st.integers(0, 2**16))
def test_max_min_of_one_row_every_length(n, where, special, dtype, op, seed):
    # rows shorter than, equal to and longer than the 64 lanes, tails of every length, and a NaN or
    # an infinity anywhere in the body, the tail or the lanes' fold
    x = np.random.default_rng(seed).standard_normal((3, n)).astype(dtype)
    for w in where:
        x[1, w % n] = special
    out = np.empty(3, dtype)
    assert _C.reduce(_C.REDUCE_OPS[op], x, out, [1], False)
    _check(op, x, [1], False, out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim,keepdim", [
    ((300, 400), None, False), ((300, 400), 1, True), ((300, 400), (0,), False), ((50, 40, 60), (0, 2), True),
    ((300, 400), (), False),
])
def test_vector_norm_through_the_sum_of_squares(dtype, shape, dim, keepdim):
    import flambeau as fb

    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    x.reshape(-1)[7] = np.inf if dim is None else x.reshape(-1)[7]
    got = fb.linalg.vector_norm(fb.from_numpy(x), dim=dim, keepdim=keepdim).numpy()
    axes = None if dim in (None, ()) else dim
    want = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axes, keepdims=keepdim))
    assert got.dtype == dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps)

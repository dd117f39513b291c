"""dim_index with the indexed dim laid out innermost (gather/scatter along the last dim), where the
kernel walks each position's steps in a row (``run_steps``): against numpy in every layout, with
repeated indices for scatter_add, both index dtypes, and sizes large enough for threads."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flambeau_cpu import _C

GATHER, ASSIGN, ADD = 0, 1, 2


def _layout(a: np.ndarray, how: str) -> np.ndarray:
    """``a``'s values in another memory layout: a strided slice of a wider array, or reversed."""
    if how == "strided":
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    if how == "reversed":
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    return a


layouts = st.sampled_from(["contiguous", "strided", "reversed"])
shapes = st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(1, 40))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, n=st.integers(1, 40), x_layout=layouts, idx_layout=layouts, out_layout=layouts,
       idx_dtype=st.sampled_from([np.int64, np.int32]), dtype=st.sampled_from([np.float32, np.float64, np.int64]),
       seed=st.integers(0, 2**16))
def test_gather_along_the_last_dim(shape, n, x_layout, idx_layout, out_layout, idx_dtype, dtype, seed):
    rng = np.random.default_rng(seed)
    x = _layout((rng.standard_normal(shape) * 10).astype(dtype), x_layout)
    idx = _layout(rng.integers(0, shape[-1], shape[:-1] + (n,)).astype(idx_dtype), idx_layout)
    out = _layout(np.zeros(shape[:-1] + (n,), dtype), out_layout)
    assert _C.dim_index(GATHER, out, x, idx, len(shape) - 1, False)
    np.testing.assert_array_equal(out, np.take_along_axis(x, idx.astype(np.int64), -1))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, n=st.integers(1, 40), src_layout=layouts, idx_layout=layouts, out_layout=layouts,
       idx_dtype=st.sampled_from([np.int64, np.int32]), seed=st.integers(0, 2**16))
def test_scatter_add_along_the_last_dim_adds_repeats(shape, n, src_layout, idx_layout, out_layout, idx_dtype, seed):
    rng = np.random.default_rng(seed)
    src = _layout(rng.integers(-5, 5, shape[:-1] + (n,)).astype(np.float64), src_layout)
    idx = _layout(rng.integers(0, shape[-1], shape[:-1] + (n,)).astype(idx_dtype), idx_layout)
    start = rng.integers(-5, 5, shape).astype(np.float64)
    out = _layout(start.copy(), out_layout)
    assert _C.dim_index(ADD, out, src, idx, len(shape) - 1, False, 2.0)
    want = start.copy()
    lead = np.indices(idx.shape)[:-1]
    np.add.at(want, (*lead, idx.astype(np.int64)), 2.0 * src)
    np.testing.assert_array_equal(out, want)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, src_layout=layouts, out_layout=layouts, seed=st.integers(0, 2**16))
def test_scatter_along_the_last_dim(shape, src_layout, out_layout, seed):
    rng = np.random.default_rng(seed)
    # each row's indices a permutation, so that no two steps write one place
    idx = np.argsort(rng.random(shape), axis=-1)
    src = _layout(rng.standard_normal(shape), src_layout)
    out = _layout(np.zeros(shape), out_layout)
    assert _C.dim_index(ASSIGN, out, src, idx, len(shape) - 1, False)
    want = np.zeros(shape)
    np.put_along_axis(want, idx, np.asarray(src), -1)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("mode", [GATHER, ADD])
def test_threaded_sizes_match_numpy(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    idx = rng.integers(0, 4096, (64, 4096))
    if mode == GATHER:
        out = np.empty_like(x)
        assert _C.dim_index(GATHER, out, x, idx, 1, False)
        np.testing.assert_array_equal(out, np.take_along_axis(x, idx, 1))
    else:
        out = np.zeros_like(x)
        assert _C.dim_index(ADD, out, x, idx, 1, False)
        want = np.zeros_like(x)
        np.add.at(want, (np.arange(64)[:, None], idx), x)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad", [4096, -1])
def test_a_bad_index_raises_before_anything_is_written(bad):
    rng = np.random.default_rng(1)
    src = rng.standard_normal((64, 4096)).astype(np.float32)
    idx = rng.integers(0, 4096, (64, 4096))
    idx[63, 4095] = bad
    out = np.full_like(src, 7.0)
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 1 with size 4096"):
        _C.dim_index(ADD, out, src, idx, 1, False)
    assert (out == 7.0).all()

"""Sizes computed from integer arguments are checked before any work (issue 11): bincount,
repeat_interleave, tril_indices/triu_indices agree with numpy, and refuse at once what cannot be
allocated, with PyTorch's errors."""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(0, 40), max_size=300), minlength=st.integers(0, 50),
       dtype=st.sampled_from([fb.int64, fb.int32, fb.uint8, fb.int16]), weighted=st.booleans())
def test_bincount_matches_numpy(values, minlength, dtype, weighted):
    x = np.array(values, dtype=np.int64)
    w = np.linspace(-1, 1, x.size)
    got = fb.bincount(fb.tensor(x, dtype=dtype), weights=fb.tensor(w) if weighted else None, minlength=minlength)
    want = np.bincount(x, weights=w if weighted else None, minlength=minlength)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    assert got.dtype == (fb.float64 if weighted else fb.int64)


def test_bincount_large_input_uses_every_path():
    rng = np.random.default_rng(0)
    for high in (3, 1000, 100_000):  # four-way histograms, threaded private ones, one plain one
        x = rng.integers(0, high, size=1 << 20)
        np.testing.assert_array_equal(fb.bincount(fb.from_numpy(x)).numpy(), np.bincount(x))
        np.testing.assert_array_equal(fb.bincount(fb.from_numpy(x.astype(np.int32))).numpy(), np.bincount(x))
        w = rng.random(x.size)
        np.testing.assert_allclose(fb.bincount(fb.from_numpy(x), weights=fb.from_numpy(w)).numpy(),
                                   np.bincount(x, weights=w))


@pytest.mark.parametrize("value, message", [
    (2 ** 63 - 1, "Storage size calculation overflowed"),  # returned an empty tensor; numpy's heap corrupted
    (2 ** 40, "not enough memory: you tried to allocate 8796093022216 bytes"),
    (-1, "bincount only supports 1-d non-negative integral inputs"),
    (-2 ** 63, "bincount only supports 1-d non-negative integral inputs"),
])
def test_bincount_refuses_values_it_cannot_count(value, message):
    with pytest.raises(RuntimeError, match=message):
        fb.bincount(fb.tensor([1, value]))


def test_repeat_interleave_refuses_at_once_and_builds_with_numpy():
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="not enough memory"):  # built a Python list until memory ran out
        fb.arange(2.0).repeat_interleave(fb.tensor([2 ** 40, 1]))
    with pytest.raises(RuntimeError, match="overflowed"):
        fb.arange(2.0).repeat_interleave(fb.tensor([2 ** 62, 2 ** 62]))
    with pytest.raises(RuntimeError, match="overflowed"):
        fb.arange(2.0).repeat_interleave(2 ** 62)
    assert time.perf_counter() - start < 5
    counts = np.random.default_rng(1).integers(0, 5, size=1000)
    np.testing.assert_array_equal(fb.repeat_interleave(fb.from_numpy(counts)).numpy(),
                                  np.repeat(np.arange(1000), counts))
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(fb.from_numpy(x).repeat_interleave(fb.tensor([2, 0, 1]), dim=0).numpy(),
                                  np.repeat(x, [2, 0, 1], axis=0))


@settings(max_examples=200, deadline=None)
@given(row=st.integers(0, 12), col=st.integers(0, 12), offset=st.integers(-15, 15),
       dtype=st.sampled_from([fb.int64, fb.int32]))
def test_triangle_indices_match_numpy(row, col, offset, dtype):
    for ours, theirs in ((fb.tril_indices, np.tril_indices), (fb.triu_indices, np.triu_indices)):
        got = ours(row, col, offset, dtype=dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), np.array(theirs(row, offset, col)).reshape(2, -1))


def test_triangle_indices_of_huge_matrices_are_counted_not_walked():
    start = time.perf_counter()
    for fn in (fb.tril_indices, fb.triu_indices):
        with pytest.raises(RuntimeError, match="overflowed"):  # walked 2**31 rows in Python
            fn(2 ** 31, 2 ** 31)
        assert fn(2 ** 62, 0).shape == (2, 0)
    np.testing.assert_array_equal(fb.tril_indices(3, 2 ** 62).numpy(), np.array(np.tril_indices(3)))
    np.testing.assert_array_equal(fb.triu_indices(2 ** 62, 3).numpy(), np.array(np.triu_indices(3)))
    assert time.perf_counter() - start < 5

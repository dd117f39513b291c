"""unique of integers over a dense range: counted (``_C.unique_dense_ints``) rather than sorted, with
the sort's values, inverse and counts; wide spans fall back to the sort; the C++ entry checks its
arrays before any write."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau_cpu import _C
from flambeau_cpu.kernels import statistics

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8]  # the integer dtypes flambeau has


def _check_against_numpy(x: np.ndarray) -> None:
    v, inv, c = np.unique(x, return_inverse=True, return_counts=True)
    got_v, got_inv, got_c = fb.unique(fb.from_numpy(x), return_inverse=True, return_counts=True)
    assert got_v.numpy().dtype == x.dtype
    np.testing.assert_array_equal(got_v.numpy(), v)
    np.testing.assert_array_equal(got_inv.numpy(), inv.reshape(x.shape))
    np.testing.assert_array_equal(got_c.numpy(), c)
    np.testing.assert_array_equal(fb.unique(fb.from_numpy(x)).numpy(), v)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_dense_unique_matches_numpy_at_the_dtype_extremes(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    low = rng.integers(info.min, info.min + 40, 500, dtype=dtype, endpoint=True)
    high = rng.integers(info.max - 40, info.max, 500, dtype=dtype, endpoint=True)
    _check_against_numpy(low.reshape(20, 25))
    _check_against_numpy(high)
    if np.dtype(dtype).itemsize <= 2:  # the whole range is dense for the narrow types
        _check_against_numpy(np.concatenate([low, high]))


def test_the_counting_path_runs_and_a_wide_span_falls_back_to_the_sort(monkeypatch):
    calls = []
    real = statistics._unique_dense

    def spy(*args):
        result = real(*args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(statistics, "_unique_dense", spy)
    _check_against_numpy(np.random.default_rng(0).integers(0, 100_000, 300_000))
    assert calls and all(calls)
    calls.clear()
    extremes = np.array([np.iinfo(np.int64).min, 5, np.iinfo(np.int64).max, 5, -1], np.int64)
    _check_against_numpy(extremes)  # span 2**64 - 1: the sort
    assert calls and not any(calls)
    calls.clear()
    _check_against_numpy(np.array([0, 2000, 3, 3], np.int64))  # span past 2n + 1024: the sort
    assert calls and not any(calls)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60), st.integers(0, 3), st.booleans())
def test_dense_unique_matches_numpy_property(values, spread, negate):
    x = np.array(values, np.int64) >> np.int64(56 + spread)  # narrow spans mostly, some wide
    if negate:
        x = -x
    _check_against_numpy(x)


def test_unique_dense_ints_checks_its_arrays_first():
    x = np.arange(10, dtype=np.int64)
    with pytest.raises(ValueError, match="1-D C-contiguous"):
        _C.unique_dense_ints(x.reshape(2, 5), None, 100)
    with pytest.raises(ValueError, match="1-D C-contiguous"):
        _C.unique_dense_ints(x[::2], None, 100)
    with pytest.raises(TypeError, match="signed integer"):
        _C.unique_dense_ints(x.astype(np.float64), None, 100)
    with pytest.raises(TypeError, match="signed integer"):
        _C.unique_dense_ints(x.astype(np.uint64), None, 100)
    with pytest.raises(ValueError, match="must not be empty"):
        _C.unique_dense_ints(x[:0], None, 100)
    for bad in (np.empty(9, np.int64), np.empty(10, np.int32), np.empty(20, np.int64)[::2]):
        with pytest.raises(ValueError, match="inverse must be"):
            _C.unique_dense_ints(x, bad, 100)
    with pytest.raises(ValueError, match="must not overlap"):
        _C.unique_dense_ints(x, x, 100)
    inverse = np.full(10, -7, np.int64)
    assert _C.unique_dense_ints(x, inverse, 9) is None  # span 9 is not under 9: declined, untouched
    assert (inverse == -7).all()
    values, counts = _C.unique_dense_ints(x, inverse, 10)
    assert values.tolist() == list(range(10)) and counts.tolist() == [1] * 10 and inverse.tolist() == list(range(10))


def test_an_input_written_during_the_call_never_indexes_past_the_slots():
    # Another thread rewrites the input with values far outside the span the first pass found; the
    # counting pass checks each slot again and hands such a call back to the sort (None).
    import threading

    x = np.zeros(2_000_000, np.int64)
    low, high = np.zeros_like(x), np.full_like(x, 10**12)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            np.copyto(x, high)  # large copies release the GIL
            np.copyto(x, low)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        inverse = np.empty(x.size, np.int64)
        for _ in range(30):
            result = _C.unique_dense_ints(x, inverse, 2 * x.size + 1024)
            assert result is None or len(result) == 2
    finally:
        stop.set()
        thread.join()

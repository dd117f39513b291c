"""flambeau_cpu._C.dim_index refuses whatever would take it outside its arrays, and agrees with numpy."""
from __future__ import annotations

import numpy as np
import pytest

_C = pytest.importorskip("flambeau_cpu._C")
dim_index = _C.dim_index
GATHER, ASSIGN, ADD = 0, 1, 2


def test_gather_scatter_select_add_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6))
    idx = rng.integers(0, 5, size=(3, 6))
    out = np.empty((3, 6))
    assert dim_index(GATHER, out, x, idx, 0, False)
    np.testing.assert_array_equal(out, np.take_along_axis(x, idx, 0))
    acc = np.zeros((5, 6))
    assert dim_index(ADD, acc, out, idx, 0, False, 2.0)
    want = np.zeros((5, 6))
    np.add.at(want, (idx, np.arange(6)), 2.0 * out)
    np.testing.assert_allclose(acc, want)
    rows = rng.integers(0, 5, size=4)
    sel = np.empty((4, 6))
    assert dim_index(GATHER, sel, x, rows, 0, True)
    np.testing.assert_array_equal(sel, x[rows])
    pre = np.ones((5, 6))
    dst = np.empty((5, 6))
    assert dim_index(ASSIGN, dst, sel, np.array([4, 1, 0, 2]), 0, True, 1.0, pre)
    want = pre.copy()
    want[[4, 1, 0, 2]] = sel
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("args", [
    (GATHER, np.empty((2, 3)), np.zeros((4, 3)), np.zeros((2, 4), dtype=np.int64), 0, False),  # index wider
    (GATHER, np.empty((2, 2)), np.zeros((4, 3)), np.zeros((2, 3), dtype=np.int64), 0, False),  # out != index
    (ADD, np.zeros((4, 3)), np.zeros((1, 3)), np.zeros((2, 3), dtype=np.int64), 0, False),  # src smaller
    (GATHER, np.empty((2, 3)), np.zeros((4, 3)), np.zeros(3, dtype=np.int64), 0, True),  # length mismatch
    (GATHER, np.empty((2, 3)), np.zeros((4, 3)), np.zeros((2, 3), dtype=np.int64), 2, False),  # bad dim
    (GATHER, np.empty(3), np.zeros((4, 3)), np.zeros(3, dtype=np.int64), 0, False),  # ndim mismatch
])
def test_inconsistent_shapes_are_refused(args):
    with pytest.raises(ValueError):
        dim_index(*args)


def test_out_of_range_index_raises_before_writing():
    out = np.full((3, 2), 7.0)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        dim_index(ADD, out, np.ones((2, 2)), np.array([[0, 1], [3, 0]]), 0, False, 1.0, np.zeros((3, 2)))
    np.testing.assert_array_equal(out, np.full((3, 2), 7.0))  # not even the prefill happened
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        dim_index(GATHER, np.empty(2), np.ones(3), np.array([0, -1], dtype=np.int32), 0, False)


def test_views_reaching_outside_their_buffer_and_read_only_outputs_are_refused():
    base = np.zeros(4)
    bad = np.lib.stride_tricks.as_strided(base, shape=(4,), strides=(16,))
    with pytest.raises(ValueError):
        dim_index(GATHER, np.empty(2), bad, np.array([0, 1]), 0, False)
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        dim_index(ADD, ro, np.ones(2), np.array([0, 1]), 0, False)


def test_declines_what_it_does_not_handle():
    idx = np.array([0, 1])
    assert not dim_index(GATHER, np.empty(2, np.float32), np.ones(3), idx, 0, False)  # dtypes differ
    assert not dim_index(ADD, np.zeros(3, bool), np.ones(2, bool), idx, 0, False)  # no bool arithmetic
    assert not dim_index(GATHER, np.empty(2), np.ones(3), idx.astype(np.int16), 0, False)  # index dtype
    x = np.arange(4.0)
    assert not dim_index(ASSIGN, x, x[:2], idx, 0, False)  # src overlaps out


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_index_select_of_whole_rows_threads_and_matches_numpy(index_dtype):
    # Rows of a matrix are copied whole, one memcpy per index, split over the indices.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((700, 300)).astype(np.float32)
    rows = rng.integers(0, 700, size=900).astype(index_dtype)
    out = np.empty((900, 300), np.float32)
    assert dim_index(GATHER, out, x, rows, 0, True)
    np.testing.assert_array_equal(out, x[rows])
    strided_rows = rows[::-1][::2]  # a reversed, strided index vector
    out = np.empty((450, 300), np.float32)
    assert dim_index(GATHER, out, x, strided_rows, 0, True)
    np.testing.assert_array_equal(out, x[strided_rows])
    bad = rows.copy()
    bad[-1] = 700
    target = np.full((900, 300), 5.0, np.float32)
    with pytest.raises(IndexError, match="index 700 is out of bounds"):
        dim_index(GATHER, target, x, bad, 0, True)
    np.testing.assert_array_equal(target, 5.0)  # nothing written before the check

"""flambeau_cpu._C.select_into (where's C++ kernel) against numpy's where, and what it declines."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu import _C

DTYPES = [np.bool_, np.uint8, np.int16, np.float32, np.int64, np.float64, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_0d,b_0d", [(False, False), (False, True), (True, False), (True, True)])
def test_matches_numpy(dtype, a_0d, b_0d):
    rng = np.random.default_rng(0)
    shape = (300, 257)  # large enough for threads, not a multiple of the chunks
    cond = rng.random(shape) > 0.5
    a = np.asarray(rng.random(() if a_0d else shape) * 100).astype(dtype)
    b = np.asarray(rng.random(() if b_0d else shape) * 100).astype(dtype)
    out = np.empty(shape, dtype)
    assert _C.select_into(out, cond, a, b)
    np.testing.assert_array_equal(out, np.where(cond, a, b))


def test_declines_what_numpy_must_do():
    cond = np.ones((4, 4), bool)
    a, b, out = np.ones((4, 4)), np.zeros((4, 4)), np.empty((4, 4))
    assert not _C.select_into(out, cond, a, b.astype(np.float32))  # another dtype
    assert not _C.select_into(out, cond, a[:, :1], b)  # broadcasting
    assert not _C.select_into(out, cond, np.ones((4, 8))[:, ::2], b)  # strided
    assert not _C.select_into(out, cond.T.copy().T, a, b)  # a non-contiguous condition
    flat = np.zeros(20)
    assert not _C.select_into(flat[:16].reshape(4, 4), cond, flat[4:].reshape(4, 4), b)  # a shifted overlap
    assert not _C.select_into(np.empty((4, 4), np.complex128), cond, a.astype(np.complex128),
                              b.astype(np.complex128))  # 16-byte elements


def test_out_may_be_an_operand_itself():
    rng = np.random.default_rng(4)
    cond = rng.random((64, 64)) > 0.5
    x = rng.standard_normal((64, 64))
    out = x.copy()
    assert _C.select_into(out, cond, np.asarray(9.0), out)  # masked_fill_ in place
    np.testing.assert_array_equal(out, np.where(cond, 9.0, x))


def test_bad_views_and_read_only_out_raise():
    cond = np.ones(4, bool)
    a, b = np.ones(4), np.zeros(4)
    ro = np.empty(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        _C.select_into(ro, cond, a, b)
    outside = np.lib.stride_tricks.as_strided(np.ones(2), (4,), (8,))
    with pytest.raises(ValueError):
        _C.select_into(np.empty(4), cond, outside, b)


def test_flambeau_where_uses_it_and_keeps_numpy_semantics():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((400, 300)).astype(np.float32)
    cond = x > 0
    got = fb.where(fb.from_numpy(cond), fb.from_numpy(x), 0.5).numpy()
    np.testing.assert_array_equal(got, np.where(cond, x, np.float32(0.5)))
    # a number that does not fit the dtype exactly, and broadcasting: numpy's path, same result as before
    u = (rng.random((400, 300)) * 200).astype(np.uint8)
    got = fb.where(fb.from_numpy(cond), fb.from_numpy(u), 1.5)
    assert got.dtype is fb.float32
    np.testing.assert_array_equal(got.numpy(), np.where(cond, u, np.float32(1.5)))
    row = rng.standard_normal(300).astype(np.float32)
    got = fb.where(fb.from_numpy(cond), fb.from_numpy(x), fb.from_numpy(row)).numpy()
    np.testing.assert_array_equal(got, np.where(cond, x, row))


@pytest.mark.parametrize("in_place", [False, True])
def test_masked_fill_through_select(in_place):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((400, 300)).astype(np.float32)
    mask = rng.random((400, 300)) > 0.3
    t = fb.from_numpy(x.copy())
    got = t.masked_fill_(fb.from_numpy(mask), 2.5) if in_place else t.masked_fill(fb.from_numpy(mask), 2.5)
    assert (got is t) == in_place
    np.testing.assert_array_equal(got.numpy(), np.where(mask, np.float32(2.5), x))
    if not in_place:
        np.testing.assert_array_equal(t.numpy(), x)  # the input is untouched


def test_masked_fill_values_cast_as_before_and_broadcast_masks_still_work():
    rng = np.random.default_rng(3)
    u = (rng.random((400, 300)) * 200).astype(np.uint8)
    mask = rng.random((400, 300)) > 0.5
    got = fb.from_numpy(u).masked_fill(fb.from_numpy(mask), fb.tensor(-1)).numpy()  # an int64 0-d value
    np.testing.assert_array_equal(got, np.where(mask, np.uint8(255), u))
    row_mask = rng.random(300) > 0.5  # broadcast over rows: numpy's path
    got = fb.from_numpy(u).masked_fill(fb.from_numpy(row_mask), 7).numpy()
    np.testing.assert_array_equal(got, np.where(row_mask, np.uint8(7), u))

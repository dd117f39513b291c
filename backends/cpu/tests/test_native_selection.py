"""The C++ compactions (nonzero, masked_select, x[mask]), the row selections (median, nanmedian),
logsumexp along rows, clamp with number bounds and the sum of squares behind the 2-norm, each
against numpy over dtypes, thread-sized shapes and special values, plus what they decline."""
from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau_cpu import _C

ALL_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, ml_dtypes.bfloat16,
              np.float32, np.float64, np.complex64, np.complex128]
SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1e-30])


def _sprinkled(rng, shape, dtype):
    """Values of ``dtype`` with about half zeros, and -0.0, NaN and infinities where the dtype has them."""
    x = rng.integers(-3, 4, shape).astype(np.float64) * (rng.random(shape) < 0.5)
    if np.dtype(dtype).kind in "bu":
        x = np.abs(x)
    if np.dtype(dtype).kind in "fc" or dtype is ml_dtypes.bfloat16:
        spots = rng.random(shape) < 0.05
        x[spots] = rng.choice(SPECIAL, int(spots.sum()))
    out = x.astype(dtype)
    if np.dtype(dtype).kind == "c":
        out.imag = np.where(rng.random(shape) < 0.2, -0.0, 0.0) + (rng.random(shape) < 0.1)
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(7,), (300, 257), (3, 50, 70), (0, 4), (5, 0), (70000,)])
def test_nonzero_matches_numpy(dtype, shape):
    x = _sprinkled(np.random.default_rng(0), shape, dtype)
    got = _C.nonzero(x)
    want = np.argwhere(x != 0)  # numpy's != treats -0.0 as zero and NaN as nonzero, as PyTorch
    assert got.dtype == np.int64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fb.nonzero(fb.from_numpy(x)).numpy(), want)
    for got_dim, want_dim in zip(fb.nonzero(fb.from_numpy(x), as_tuple=True), np.nonzero(x != 0)):
        np.testing.assert_array_equal(got_dim.numpy(), want_dim)


def test_nonzero_declines_views_and_0d():
    x = np.ones((4, 6))
    assert _C.nonzero(x[:, ::2]) is None
    assert _C.nonzero(np.asarray(1.0)) is None
    np.testing.assert_array_equal(fb.nonzero(fb.from_numpy(x)[:, ::2]).numpy(), np.argwhere(x[:, ::2]))
    assert fb.nonzero(fb.tensor(2.0)).shape == (1, 0)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(9,), (300, 257), (0, 3)])
def test_masked_select_matches_numpy(dtype, shape):
    rng = np.random.default_rng(1)
    x = _sprinkled(rng, shape, dtype)
    mask = rng.random(shape) < 0.4
    got = _C.masked_select(x, mask)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.view(np.uint8), x[mask].view(np.uint8))  # bit for bit, NaN too
    t, m = fb.from_numpy(x), fb.from_numpy(mask)
    np.testing.assert_array_equal(fb.masked_select(t, m).numpy().view(np.uint8), x[mask].view(np.uint8))
    np.testing.assert_array_equal(t[m].numpy().view(np.uint8), x[mask].view(np.uint8))


def test_masked_select_declines_and_checks_out():
    x, mask = np.arange(12.0).reshape(3, 4), np.ones((3, 4), bool)
    assert _C.masked_select(x, mask[:, :1]) is None  # broadcasting is numpy's
    assert _C.masked_select(x, mask.astype(np.uint8)) is None  # only bool masks
    assert _C.masked_select(x[:, ::2], mask[:, :2]) is None  # strided input
    assert _C.masked_select(x, mask, np.empty(11)) is None  # out of the wrong size: nothing written
    out = np.full(12, -1.0)
    assert _C.masked_select(x, mask, out) is not None
    np.testing.assert_array_equal(out, x.reshape(-1))
    assert _C.masked_select(x, mask, np.empty(12, np.float32)) is None  # out of another dtype
    ro = np.empty(12)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        _C.masked_select(x, mask, ro)
    # broadcast masks and inputs still work through numpy
    t = fb.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(fb.masked_select(t, fb.tensor([True, False, True, False])).numpy(),
                                  x[:, [0, 2]].reshape(-1))


def test_compactions_survive_a_racing_writer():
    """The counts of the first pass are not trusted by the second: another thread flipping the
    input between them may give a wrong answer (as in PyTorch) but never a write out of bounds."""
    x = np.zeros(1 << 20, np.float32)
    mask = np.zeros(1 << 20, bool)
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            x[:] = 1.0
            mask[:] = True
            x[:] = 0.0
            mask[:] = False

    writer = threading.Thread(target=flip)
    writer.start()
    try:
        for _ in range(200):
            coords = _C.nonzero(x.reshape(1024, 1024))
            assert coords.shape[1] == 2 and (coords >= 0).all() and (coords < 1024).all()
            picked = _C.masked_select(x, mask)
            assert picked.size <= x.size
    finally:
        stop.set()
        writer.join()


# -- median ---------------------------------------------------------------------------------------

def _median_ref(x: np.ndarray, ignore_nan: bool):
    """The element of rank (m-1)//2 in the stable order of each row, and its position; NaN rows give
    their first NaN (nanmedian: only rows of NaN alone)."""
    order = np.argsort(x, axis=-1, kind="stable")
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    counted = x.shape[-1] - (nan.sum(-1) if ignore_nan else 0)
    rank = np.broadcast_to(np.maximum(counted - 1, 0) // 2, x.shape[:-1])
    index = np.take_along_axis(order, rank[..., None], -1)[..., 0]
    first_nan = np.argmax(nan, -1)
    use_nan = nan.any(-1) if not ignore_nan else nan.all(-1)
    index = np.where(use_nan, first_nan, index)
    return np.take_along_axis(x, index[..., None], -1)[..., 0], index


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("ignore_nan", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (4, 2), (300, 257), (2, 3, 1000), (3, 70000)])
def test_median_rows_match_the_stable_rank(dtype, ignore_nan, shape):
    rng = np.random.default_rng(2)
    x = rng.integers(-5, 6, shape).astype(dtype)  # many ties: the index must be the stable one
    if x.dtype.kind == "f":
        x[rng.random(shape) < 0.01] = np.nan
        x[0, ...] = np.nan  # a row (or block) of NaN only
    values, indices = np.empty(shape[:-1] + (1,), dtype), np.empty(shape[:-1] + (1,), np.int64)
    _C.median_lastdim(x, values, indices, ignore_nan, shape[-1])
    want_v, want_i = _median_ref(x, ignore_nan)
    np.testing.assert_array_equal(values[..., 0], want_v)
    np.testing.assert_array_equal(indices[..., 0], want_i)
    op = fb.nanmedian if ignore_nan else fb.median
    got = op(fb.from_numpy(x), -1)
    np.testing.assert_array_equal(got.values.numpy(), want_v)
    np.testing.assert_array_equal(got.indices.numpy(), want_i)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 5), n=st.integers(1, 40), dim=st.integers(0, 1), keepdim=st.booleans(),
       seed=st.integers(0, 2**16))
def test_median_along_any_dim_matches_the_reference(rows, n, dim, keepdim, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (rows, n)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    got = fb.median(fb.from_numpy(x), dim, keepdim=keepdim)
    want_v, want_i = _median_ref(np.moveaxis(x, dim, -1), False)
    if keepdim:
        want_v, want_i = np.expand_dims(want_v, dim), np.expand_dims(want_i, dim)
    np.testing.assert_array_equal(got.values.numpy(), want_v)
    np.testing.assert_array_equal(got.indices.numpy(), want_i)


def test_median_checks_before_writing():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError):
        _C.median_lastdim(x, np.empty((3, 2), np.float32), np.empty((3, 1), np.int64), False, 4)
    with pytest.raises(ValueError):
        _C.median_lastdim(x, np.empty((3, 1), np.float32), np.empty((3, 1), np.int64), False, 0)
    with pytest.raises(TypeError):
        _C.median_lastdim(x.astype(np.float16), np.empty((3, 1), np.float16), np.empty((3, 1), np.int64), False, 4)


# -- logsumexp, clamp, the 2-norm --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (300, 257), (2, 9000), (70000, 3)])
def test_logsumexp_rows(dtype, shape):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 30).astype(dtype)
    x[0, :] = -np.inf  # a row of -inf: -inf
    if shape[0] > 2:
        x[1, 0] = np.inf  # +inf wins
        x[2, -1] = np.nan  # NaN wins
    out = np.empty(shape[0], dtype)
    assert _C.logsumexp_lastdim(x, out)
    top = np.max(x, -1, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0)
    with np.errstate(all="ignore"):
        want = (np.log(np.sum(np.exp(x.astype(np.float64) - safe), -1)) + safe[:, 0]).astype(dtype)
    # log(sum) + top cancels near 0: the error is relative to the row's largest term (|top| < 200)
    tol = dict(rtol=2e-6, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(out, want, **tol)
    np.testing.assert_allclose(fb.logsumexp(fb.from_numpy(x), 1).numpy(), want, **tol)
    np.testing.assert_allclose(fb.logsumexp(fb.from_numpy(x), -1, keepdim=True).numpy()[:, 0], want, **tol)


def test_logsumexp_declines():
    x = np.ones((4, 6), np.float32)
    assert not _C.logsumexp_lastdim(x[:, ::2], np.empty(4, np.float32))
    assert not _C.logsumexp_lastdim(x, np.empty(4, np.float64))
    assert not _C.logsumexp_lastdim(x, np.empty(3, np.float32))
    assert not _C.logsumexp_lastdim(np.ones((4, 0), np.float32), np.empty(4, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (0.5, -0.5), (-np.inf, 0.0), (0.0, np.inf), (1e300, 2e300)])
def test_clamp_matches_torch_rule(dtype, bounds):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(100_003).astype(dtype)
    x[::97] = np.nan
    lo, hi = bounds
    if dtype == np.float32 and lo == 1e300:  # a bound past the dtype's range: PyTorch's error
        with pytest.raises(RuntimeError, match="cannot be converted to type float"):
            fb.clamp(fb.from_numpy(x), lo, hi)
        return
    want = np.minimum(np.maximum(x, dtype(lo)), dtype(hi))  # hi wins when lo > hi; NaN stays
    np.testing.assert_array_equal(fb.clamp(fb.from_numpy(x), lo, hi).numpy(), want)
    t = fb.from_numpy(x.copy())
    t.clamp_(lo, hi)
    np.testing.assert_array_equal(t.numpy(), want)


def test_clamp_with_nan_bounds_and_declines():
    x = np.linspace(-1, 1, 50_000).astype(np.float32)
    assert not _C.clamp(x, np.empty_like(x), float("nan"), 1.0)
    assert np.isnan(fb.clamp(fb.from_numpy(x), float("nan"), 1.0).numpy()).all()
    assert not _C.clamp(x[::2], np.empty(25_000, np.float32), 0.0, 1.0)
    assert not _C.clamp(x, np.empty_like(x, np.float64), 0.0, 1.0)
    assert not _C.clamp(x[1:], x[:-1], 0.0, 1.0)  # a shifted overlap


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_sum_of_squares_and_the_2_norm(dtype, dim):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 257)).astype(dtype)
    want = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=dim))
    got = fb.linalg.vector_norm(fb.from_numpy(x), dim=dim).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)
    np.testing.assert_allclose(fb.linalg.vector_norm(fb.from_numpy(x.T), dim=dim).numpy(),
                               np.sqrt(np.sum(x.T.astype(np.float64) ** 2, axis=dim)),
                               rtol=1e-6 if dtype == np.float32 else 1e-13)
    big = np.full(70_000, 1e20, dtype)  # squares past float32's range give inf, as in PyTorch
    assert np.isinf(fb.linalg.vector_norm(fb.from_numpy(big)).item()) == (dtype == np.float32)


def test_unique_values_only_and_with_counts():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 1000, 100_000)
    v, c = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(fb.unique(fb.from_numpy(x)).numpy(), v)
    got_v, got_c = fb.unique(fb.from_numpy(x), return_counts=True)
    np.testing.assert_array_equal(got_v.numpy(), v)
    np.testing.assert_array_equal(got_c.numpy(), c)
    f = np.array([np.nan, 1.0, -0.0, 0.0, np.nan, 1.0], np.float32)
    got = fb.unique(fb.from_numpy(f)).numpy()
    assert got.size == 4 and np.isnan(got[-2:]).all() and got[0] == 0 and got[1] == 1


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.int16, np.uint8])
@pytest.mark.parametrize("n", [1, 7, 300, 70_000])
def test_unique_by_the_stable_sort_matches_numpy(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, max(2, n // 3), n).astype(dtype).reshape(-1, 1) if n % 2 else rng.integers(-50, 50, n).astype(
        dtype if np.dtype(dtype).kind != "u" else np.int16)
    if np.dtype(x.dtype).kind == "f":
        x.reshape(-1)[::5] = -0.0
    v, inv, c = np.unique(x, return_inverse=True, return_counts=True)
    got_v, got_inv, got_c = fb.unique(fb.from_numpy(x), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(got_v.numpy(), v)
    np.testing.assert_array_equal(got_inv.numpy(), inv.reshape(x.shape))
    np.testing.assert_array_equal(got_c.numpy(), c)
    np.testing.assert_array_equal(got_v.numpy()[got_inv.numpy()], x)


def test_unique_with_nan_gives_each_nan_its_own_entry():
    x = np.array([np.nan, 2.0, np.nan, 1.0, 2.0], np.float64)
    v, inv, c = fb.unique(fb.from_numpy(x), return_inverse=True, return_counts=True)
    assert v.numpy()[:2].tolist() == [1.0, 2.0] and np.isnan(v.numpy()[2:]).all()
    assert c.tolist() == [1, 2, 1, 1] and inv.tolist() == [2, 1, 3, 0, 1]

"""sort/argsort/topk/kthvalue/searchsorted and the comparisons, beyond the conformance kit:
the C++ paths (long rows, radix keys of every dtype, heap top-k, threads), NaN and signed-zero
ordering, named-tuple results, Python-bool results, and property tests against numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return (n - 1) - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


DTYPES = ["float32", "float64", "int32", "int64", "int16", "uint8", "float16"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 300, 5000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_stable_numpy(dtype, n, descending):
    rng = np.random.default_rng(n)
    x = rng.integers(-50, 50, size=(3, n)).astype(dtype)  # many ties
    values, indices = fb.sort(fb.from_numpy(x), -1, descending)
    order = stable_order(x, -1, descending)
    assert np.array_equal(indices.numpy(), order)
    assert np.array_equal(values.numpy(), np.take_along_axis(x, order, -1))


@pytest.mark.parametrize("n", [7, 1000])
def test_sort_nan_inf_and_signed_zero(n):
    rng = np.random.default_rng(0)
    x = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0]), size=n)
    for descending in (False, True):
        values, indices = fb.sort(fb.tensor(x), descending=descending)
        order = stable_order(x, 0, descending)
        assert np.array_equal(indices.numpy(), order)  # -0.0 and 0.0 tie: their input order is kept
        assert np.array_equal(values.numpy(), x[order], equal_nan=True)
    assert math.isnan(fb.sort(fb.tensor(x)).values[-1].item())
    assert math.isnan(fb.sort(fb.tensor(x), descending=True).values[0].item())


def test_sort_returns_named_tuple_and_writes_out():
    x = fb.tensor([[3.0, 1.0, 2.0]])
    result = x.sort(stable=True)
    assert type(result).__name__ == "sort" and type(result).__module__ == "flambeau.return_types"
    assert result.values.tolist() == [[1.0, 2.0, 3.0]] and result.indices.tolist() == [[1, 2, 0]]
    v, i = fb.empty(1, 3), fb.empty(1, 3, dtype=fb.int64)
    out = fb.sort(x, 1, True, out=(v, i))
    assert out[0] is v and v.tolist() == [[3.0, 2.0, 1.0]] and i.tolist() == [[0, 2, 1]]


def test_sort_non_contiguous_and_inner_dim():
    x = np.random.default_rng(1).standard_normal((6, 5, 4))
    t = fb.from_numpy(x).permute(2, 0, 1)
    for dim in (0, 1, 2, -1):
        values, indices = fb.sort(t, dim)
        ref = stable_order(x.transpose(2, 0, 1), dim, False)
        assert np.array_equal(indices.numpy(), ref)


def test_argsort_and_msort():
    x = np.random.default_rng(2).integers(0, 5, size=(4, 600))
    assert np.array_equal(fb.argsort(fb.from_numpy(x), descending=True).numpy(), stable_order(x, -1, True))
    assert np.array_equal(fb.from_numpy(x).argsort(0).numpy(), stable_order(x, 0, False))
    assert np.array_equal(fb.msort(fb.from_numpy(x)).numpy(), np.sort(x, axis=0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("n,k", [(10, 3), (2000, 10), (2000, 1500), (300_000, 7)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_stable_order(dtype, n, k, largest):
    rng = np.random.default_rng(k)
    x = rng.integers(-1000, 1000, size=(2, n)).astype(dtype)
    values, indices = fb.topk(fb.from_numpy(x), k, largest=largest)
    order = stable_order(x, -1, largest)[:, :k]
    assert np.array_equal(indices.numpy(), order)
    assert np.array_equal(values.numpy(), np.take_along_axis(x, order, -1))


def test_topk_long_row_split_across_threads():
    x = np.random.default_rng(3).standard_normal(2_000_000).astype(np.float32)
    x[123_456] = np.nan
    values, indices = fb.topk(fb.from_numpy(x), 5)
    assert indices[0].item() == 123_456 and math.isnan(values[0].item())
    assert np.array_equal(indices.numpy()[1:], np.argsort(-np.nan_to_num(x, nan=-np.inf), kind="stable")[:4])


def test_topk_errors_and_edge_cases():
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fb.topk(fb.tensor([1.0, 2.0]), 3)
    empty = fb.topk(fb.tensor([[1.0, 2.0]]), 0)
    assert tuple(empty.values.shape) == (1, 0)
    assert fb.topk(fb.tensor(4.0), 1).values.item() == 4.0


def test_kthvalue():
    x = fb.tensor([[5.0, 1.0, 4.0, 1.0], [2.0, 2.0, 0.0, 9.0]])
    r = fb.kthvalue(x, 2, 1)
    assert r.values.tolist() == [1.0, 2.0] and r.indices.tolist() == [3, 0]
    assert fb.kthvalue(x, 1, 0, keepdim=True).values.tolist() == [[2.0, 1.0, 0.0, 1.0]]
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 0"):
        fb.kthvalue(fb.tensor([1.0, 2.0]), 3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.data())
def test_sort_topk_property(shape, data):
    x = np.random.default_rng(len(shape)).integers(-3, 4, size=shape).astype(np.float64)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    descending = data.draw(st.booleans())
    values, indices = fb.sort(fb.from_numpy(x), dim, descending)
    assert np.array_equal(indices.numpy(), stable_order(x, dim, descending))
    k = data.draw(st.integers(0, shape[dim]))
    top = fb.topk(fb.from_numpy(x), k, dim)
    assert np.array_equal(top.indices.numpy(), np.take(stable_order(x, dim, True), np.arange(k), axis=dim))


def test_searchsorted_and_bucketize():
    seq = fb.tensor([1, 3, 5, 7, 9])
    values = fb.tensor([[3, 6, 9], [3, 6, 9]])
    assert fb.searchsorted(seq, values).tolist() == [[1, 3, 4], [1, 3, 4]]
    assert fb.searchsorted(seq, values, right=True).tolist() == [[2, 3, 5], [2, 3, 5]]
    assert fb.searchsorted(seq, values, side="right").tolist() == [[2, 3, 5], [2, 3, 5]]
    assert fb.searchsorted(seq, 5).item() == 2 and fb.searchsorted(seq, 5).dim() == 0
    assert fb.searchsorted(seq, values, out_int32=True).dtype == fb.int32
    rows = fb.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    assert fb.searchsorted(rows, fb.tensor([[3, 6, 9], [3, 6, 9]])).tolist() == [[1, 3, 4], [1, 2, 4]]
    unsorted = fb.tensor([5.0, 1.0, 3.0])
    assert fb.searchsorted(unsorted, fb.tensor([2.0]), sorter=fb.argsort(unsorted)).tolist() == [1]
    assert fb.bucketize(fb.tensor([[3, 6, 9], [3, 6, 9]]), seq).tolist() == [[1, 3, 4], [1, 3, 4]]
    assert fb.bucketize(fb.tensor([3, 6, 9]), seq, right=True).tolist() == [2, 3, 5]
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        fb.searchsorted(seq, values, side="left", right=True)
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        fb.bucketize(values, rows)


def test_equal_and_allclose_return_python_bools():
    a = fb.tensor([1.0, 2.0, math.nan])
    assert fb.equal(fb.tensor([1, 2]), fb.tensor([1, 2])) is True
    assert fb.equal(fb.tensor([1, 2]), fb.tensor([1, 2, 3])) is False
    assert a.equal(a) is False  # NaN is not equal to itself
    assert fb.allclose(a, a, equal_nan=True) is True
    assert fb.allclose(fb.tensor([1.0, 2.0]), fb.tensor([1.0, 2.0 + 1e-7])) is True
    assert fb.tensor([1.0]).allclose(fb.tensor([1.1])) is False


def test_isclose_and_infinities():
    x = fb.tensor([1.0, math.inf, -math.inf, math.nan, 2.0])
    y = fb.tensor([1.0 + 1e-9, math.inf, math.inf, math.nan, 2.2])
    assert fb.isclose(x, y).tolist() == [True, True, False, False, False]
    assert fb.isclose(x, y, equal_nan=True).tolist() == [True, True, False, True, False]
    assert fb.isclose(x, y, rtol=0.2).tolist()[-1] is True
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        fb.isclose(x, y.double())
    assert fb.isposinf(x).tolist() == [False, True, False, False, False]
    assert x.isneginf().tolist() == [False, False, True, False, False]
    assert fb.isreal(fb.tensor([1 + 0j, 1 + 1j])).tolist() == [True, False]
    assert fb.isreal(fb.tensor([3])).tolist() == [True]


def test_fmax_fmin_ignore_nan():
    x = fb.tensor([1.0, math.nan, math.nan, 4.0])
    y = fb.tensor([math.nan, 2.0, math.nan, 3.0])
    assert np.array_equal(fb.fmax(x, y).numpy(), [1.0, 2.0, np.nan, 4.0], equal_nan=True)
    assert np.array_equal(x.fmin(y).numpy(), [1.0, 2.0, np.nan, 3.0], equal_nan=True)
    assert fb.fmax(fb.tensor([1, 5]), fb.tensor([2.5, 0.0])).dtype == fb.float32


def test_return_types_exist_before_first_use():
    import flambeau.return_types as rt

    for name in ("sort", "topk", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin", "aminmax"):
        assert getattr(rt, name).__module__ == "flambeau.return_types"


def test_sort_topk_kthvalue_off_the_last_dim_and_into_odd_outputs():
    x = np.random.default_rng(5).integers(-20, 20, size=(300, 4, 3)).astype(np.float32)
    t = fb.from_numpy(x)
    values, indices = fb.sort(t, 0, descending=True)
    assert np.array_equal(indices.numpy(), stable_order(x, 0, True))
    top = fb.topk(t, 7, 0, largest=False)
    assert np.array_equal(top.indices.numpy(), stable_order(x, 0, False)[:7])
    kth = fb.kthvalue(t, 150, 0)
    assert np.array_equal(kth.indices.numpy(), stable_order(x, 0, False)[149])
    v, i = fb.empty(300, 4, 3, dtype=fb.float64), fb.empty(300, 4, 3, dtype=fb.int64)
    fb.sort(t, 0, out=(v, i))  # a wider out dtype
    assert np.array_equal(v.numpy(), np.sort(x, axis=0))
    y = fb.from_numpy(x[:, 0, 0].copy())
    fb.sort(y, out=(y, fb.empty(300, dtype=fb.int64)))  # values written over the input
    assert np.array_equal(y.numpy(), np.sort(x[:, 0, 0]))

"""Out-of-range indices raise PyTorch's error and leave every tensor the user holds as it was.

For each index op and each way it writes into a user's tensor (in-place, ``out=``), one entry of
an otherwise valid index is replaced by an out-of-range value (extreme ones included) at a random
place; the op must raise the error PyTorch raises and change nothing. The functional forms, whose
kernels check each index as they use it, must raise the same errors.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb

EXTREMES = [2 ** 63 - 1, -2 ** 63, 2 ** 62, 2 ** 40, 2 ** 31, -2 ** 31]


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    dim = draw(st.integers(0, ndim - 1))
    size = shape[dim]
    bad = draw(st.sampled_from([size, size + 3, -size - 1] + EXTREMES))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return shape, dim, bad, seed


def _index(rng, shape, dim, bad, per_element):
    """An in-range int64 index (per element of ``shape``, or a vector along ``dim``) with one bad entry."""
    ishape = shape if per_element else (shape[dim],)
    idx = rng.integers(0, shape[dim], size=ishape)
    idx.reshape(-1)[rng.integers(idx.size)] = bad
    return fb.tensor(idx)


# name -> (per-element index?, negative indices allowed?, call(target, dim, index, src) writing into target)
INPLACE = {
    "scatter_": (True, False, lambda t, d, i, s: t.scatter_(d, i, s)),
    "scatter_add_": (True, False, lambda t, d, i, s: t.scatter_add_(d, i, s)),
    "scatter_reduce_": (True, False, lambda t, d, i, s: t.scatter_reduce_(d, i, s, "amax")),
    "index_add_": (False, False, lambda t, d, i, s: t.index_add_(d, i, s)),
    "index_copy_": (False, False, lambda t, d, i, s: t.index_copy_(d, i, s)),
    "index_fill_": (False, True, lambda t, d, i, s: t.index_fill_(d, i, 5.0)),
    "index_reduce_": (False, False, lambda t, d, i, s: t.index_reduce_(d, i, s, "amax")),
    "scatter_out": (True, False, lambda t, d, i, s: fb.scatter(t.clone(), d, i, s, out=t)),
    "scatter_add_out": (True, False, lambda t, d, i, s: fb.scatter_add(t.clone(), d, i, s, out=t)),
    "index_add_out": (False, False, lambda t, d, i, s: fb.index_add(t.clone(), d, i, s, out=t)),
    "gather_out": (True, False, lambda t, d, i, s: fb.gather(s, d, i, out=t)),
    "index_select_out": (False, False, lambda t, d, i, s: fb.index_select(s, d, i, out=t)),
    "take_out": (True, True, lambda t, d, i, s: fb.take(s, i, out=t)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_out_of_range_index_raises_and_leaves_the_target_untouched(name, case):
    shape, dim, bad, seed = case
    per_element, negative_ok, call = INPLACE[name]
    limit = int(np.prod(shape)) if name == "take_out" else shape[dim]
    if (-limit if negative_ok else 0) <= bad < limit:
        return  # in range after all
    rng = np.random.default_rng(seed)
    index = _index(rng, shape, dim, bad, per_element)
    src = fb.tensor(rng.standard_normal(shape))
    target = fb.tensor(rng.standard_normal(shape))  # every op here writes a result of `shape`
    before = target.numpy().copy()
    with pytest.raises((IndexError, RuntimeError), match=r"out of (bounds|range)"):
        call(target, dim, index, src)
    np.testing.assert_array_equal(target.numpy(), before)


FUNCTIONAL = {
    "gather": (True, RuntimeError, lambda x, d, i: fb.gather(x, d, i)),
    "scatter": (True, RuntimeError, lambda x, d, i: x.scatter(d, i, x)),
    "scatter_add": (True, RuntimeError, lambda x, d, i: x.scatter_add(d, i, x)),
    "index_select": (False, IndexError, lambda x, d, i: fb.index_select(x, d, i)),
    "index_copy": (False, IndexError, lambda x, d, i: x.index_copy(d, i, x)),
    "index_add": (False, (IndexError, RuntimeError), lambda x, d, i: x.index_add(d, i, x)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_functional_forms_raise_pytorchs_error(name, case):
    shape, dim, bad, seed = case
    per_element, exc, call = FUNCTIONAL[name]
    rng = np.random.default_rng(seed)
    x = fb.tensor(rng.standard_normal(shape))
    index = _index(rng, shape, dim, bad, per_element)
    with pytest.raises(exc, match=r"out of (bounds|range)"):
        call(x, dim, index)


@settings(max_examples=60, deadline=None)
@given(case=cases(), negative=st.booleans())
def test_advanced_indexing_with_one_index(case, negative):
    """``x[idx]`` (C++ slabs along dim 0): numpy's answer for in-range indices, negatives included;
    PyTorch's IndexError naming the value for any other, through ``out=`` too without writing."""
    shape, _, bad, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    n = shape[0]
    good = rng.integers(-n if negative else 0, n, size=rng.integers(0, 6))
    np.testing.assert_array_equal(fb.tensor(x)[fb.tensor(good)].numpy(), x[good])
    if -n <= bad < n:
        return
    idx = good.copy()
    idx = np.append(idx, bad)
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 0 with size {n}"):
        fb.tensor(x)[fb.tensor(idx)]


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_out_forms_with_valid_indices_match_numpy(case):
    """The ``out=`` kernels (a private copy of the index, checked first) give the fresh forms' answers."""
    shape, dim, _, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    idx = rng.integers(0, shape[dim], size=shape)
    vector = idx.reshape(-1)[:shape[dim]]
    out = fb.empty(shape, dtype=fb.float64)
    fb.gather(fb.tensor(x), dim, fb.tensor(idx), out=out)
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(x, idx, dim))
    fb.index_select(fb.tensor(x), dim, fb.tensor(vector), out=out)
    np.testing.assert_array_equal(out.numpy(), np.take(x, vector, axis=dim))
    rows = rng.integers(-shape[0], shape[0], size=3)
    got = fb.empty((3,) + shape[1:], dtype=fb.float64)
    fb.ops.FUNCTIONS["index"](fb.tensor(x), [fb.tensor(rows)], out=got)
    np.testing.assert_array_equal(got.numpy(), x[rows])
    acc = fb.empty(shape, dtype=fb.float64)
    fb.scatter_add(fb.tensor(x), dim, fb.tensor(idx), fb.tensor(x), out=acc)
    want = x.copy()
    for pos in np.ndindex(*shape):
        target = list(pos)
        target[dim] = idx[pos]
        want[tuple(target)] += x[pos]
    np.testing.assert_allclose(acc.numpy(), want)

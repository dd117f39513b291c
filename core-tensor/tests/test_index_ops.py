"""The index ops against numpy (take_along_axis, add.at, boolean masks), over random shapes,
dims, layouts and dtypes; bad indices leave every tensor as it was."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb

SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = {"float32": fb.float32, "float64": fb.float64, "int64": fb.int64, "int32": fb.int32,
          "int16": fb.int16, "uint8": fb.uint8, "bool": fb.bool, "complex128": fb.complex128}


@st.composite
def indexed(draw, max_dims: int = 3, dtypes=("float32", "float64", "int64", "int32", "int16", "uint8", "bool",
                                                  "complex128")):
    """An array, a dim, an index shape no larger off that dim, and a layout (plain or transposed)."""
    ndim = draw(st.integers(1, max_dims))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    ishape = tuple(draw(st.integers(0, 6)) if k == dim % ndim else draw(st.integers(0, n))
                   for k, n in enumerate(shape))
    dtype = draw(st.sampled_from(dtypes))
    seed = draw(st.integers(0, 2**31))
    transpose = draw(st.booleans()) and ndim >= 2
    return shape, dim, ishape, dtype, np.random.default_rng(seed), transpose


def _array(rng, shape, dtype):
    values = rng.integers(-5, 6, size=shape)
    return values.astype(np.bool_) if dtype == "bool" else values.astype(dtype)


def _tensor(a: np.ndarray, transpose: bool) -> fb.Tensor:
    """``a`` as a tensor, a transposed (non-contiguous) view of the same values when asked."""
    if not transpose:
        return fb.tensor(a)
    return fb.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1))).transpose(0, -1)


@given(indexed())
@SETTINGS
def test_gather_matches_take_along_axis(case):
    shape, dim, ishape, dtype, rng, transpose = case
    x = _array(rng, shape, dtype)
    index = rng.integers(0, shape[dim], size=ishape)
    corner = x[tuple(slice(None) if k == dim % x.ndim else slice(0, n) for k, n in enumerate(ishape))]
    want = np.take_along_axis(corner, index, axis=dim)
    got = fb.gather(_tensor(x, transpose), dim, fb.tensor(index))
    assert got.dtype == DTYPES[dtype]
    np.testing.assert_array_equal(got.numpy(), want)


@given(indexed(dtypes=("float64", "int64", "int32", "float32")))
@SETTINGS
def test_scatter_add_matches_add_at(case):
    shape, dim, ishape, dtype, rng, transpose = case
    x, src = _array(rng, shape, dtype), _array(rng, ishape, dtype)
    index = rng.integers(0, shape[dim], size=ishape)
    want = x.copy()
    key = tuple(index if k == dim % x.ndim else np.arange(n).reshape([-1 if j == k else 1 for j in range(x.ndim)])
                for k, n in enumerate(ishape))
    np.add.at(want, key, src)
    t = _tensor(x, transpose)
    np.testing.assert_allclose(fb.scatter_add(t, dim, fb.tensor(index), fb.tensor(src)).numpy(), want, rtol=1e-6)
    t.scatter_add_(dim, fb.tensor(index), fb.tensor(src))
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)


@given(indexed())
@SETTINGS
def test_index_select_and_index_add(case):
    shape, dim, _, dtype, rng, transpose = case
    x = _array(rng, shape, dtype)
    index = rng.integers(0, shape[dim], size=rng.integers(0, 7))
    np.testing.assert_array_equal(fb.index_select(_tensor(x, transpose), dim, fb.tensor(index)).numpy(),
                                  np.take(x, index, axis=dim))
    if dtype == "bool":
        return
    src_shape = list(shape)
    src_shape[dim] = index.size
    src = _array(rng, src_shape, dtype)
    want = x.copy()
    np.add.at(want, (slice(None),) * (dim % x.ndim) + (index,), src)
    np.testing.assert_allclose(fb.index_add(_tensor(x, transpose), dim, fb.tensor(index), fb.tensor(src)).numpy(),
                               want, rtol=1e-6)


@given(st.integers(0, 2**31), st.sampled_from(["float32", "int64", "bool"]), st.booleans())
@SETTINGS
def test_masks_match_numpy_boolean_indexing(seed, dtype, broadcast):
    rng = np.random.default_rng(seed)
    x = _array(rng, (3, 4), dtype)
    mask = rng.random((2, 3, 4) if broadcast else (3, 4)) < 0.5
    xb = np.broadcast_to(x, mask.shape)
    np.testing.assert_array_equal(fb.masked_select(fb.tensor(x), fb.tensor(mask)).numpy(), xb[mask])
    filled = np.array(xb)
    filled[mask] = 1
    np.testing.assert_array_equal(fb.masked_fill(fb.tensor(x), fb.tensor(mask), 1).numpy(), filled)
    source = _array(rng, (30,), dtype)
    scattered = np.array(xb)
    scattered[mask] = source[:mask.sum()]
    np.testing.assert_array_equal(fb.masked_scatter(fb.tensor(x), fb.tensor(mask), fb.tensor(source)).numpy(),
                                  scattered)
    np.testing.assert_array_equal(fb.nonzero(fb.tensor(mask)).numpy(), np.argwhere(mask))
    for got, want in zip(fb.nonzero(fb.tensor(mask), as_tuple=True), np.nonzero(mask)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert len(fb.where(fb.tensor(mask))) == mask.ndim


@given(st.integers(0, 2**31), st.booleans())
@SETTINGS
def test_take_and_take_along_dim(seed, transpose):
    rng = np.random.default_rng(seed)
    x = _array(rng, (3, 4), "float64")
    index = rng.integers(-12, 12, size=(2, 5))
    np.testing.assert_array_equal(fb.take(_tensor(x, transpose), fb.tensor(index)).numpy(), np.take(x, index))
    along = rng.integers(0, 4, size=(1, 6))
    np.testing.assert_array_equal(fb.take_along_dim(_tensor(x, transpose), fb.tensor(along), 1).numpy(),
                                  np.take_along_axis(x, np.broadcast_to(along, (3, 6)), 1))


# -- large inputs: the threaded C++ paths -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.int16])
def test_large_gather_and_scatter_add(dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, size=(300, 700)).astype(dtype)
    index = rng.integers(0, 300, size=(400, 700))
    np.testing.assert_array_equal(fb.gather(fb.tensor(x), 0, fb.tensor(index)).numpy(),
                                  np.take_along_axis(x, index, 0))
    src = rng.integers(-100, 100, size=(400, 700)).astype(dtype)
    want = x.copy()
    np.add.at(want, (index, np.arange(700)[None, :]), src)
    np.testing.assert_array_equal(fb.scatter_add(fb.tensor(x), 0, fb.tensor(index), fb.tensor(src)).numpy(), want)


def test_large_one_dim_scatter_add_with_duplicates_is_exact():
    rng = np.random.default_rng(1)
    index = rng.integers(0, 10, size=1_000_000)
    out = fb.zeros(10, dtype=fb.int64).scatter_add_(0, fb.tensor(index), fb.ones(1_000_000, dtype=fb.int64))
    np.testing.assert_array_equal(out.numpy(), np.bincount(index, minlength=10))


def test_large_index_add_and_select_along_each_dim():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((200, 300))
    for dim in (0, 1):
        index = rng.integers(0, x.shape[dim], size=500)
        np.testing.assert_array_equal(fb.index_select(fb.tensor(x).t().t(), dim, fb.tensor(index)).numpy(),
                                      np.take(x, index, axis=dim))
        src_shape = list(x.shape)
        src_shape[dim] = 500
        src = rng.standard_normal(src_shape)
        want = x.copy()
        np.add.at(want, (slice(None),) * dim + (index,), 2.0 * src)
        np.testing.assert_allclose(fb.index_add(fb.tensor(x), dim, fb.tensor(index), fb.tensor(src), alpha=2.0)
                                   .numpy(), want, rtol=1e-12)


# -- bad indices change nothing ---------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, message", [
    (lambda x, o: x.scatter_(0, fb.tensor([[0, 1], [7, 0]]), fb.ones(2, 2)), RuntimeError,
     "index 7 is out of bounds for dimension 0 with size 3"),
    (lambda x, o: x.scatter_add_(0, fb.tensor([[0, 1], [0, -1]]), fb.ones(2, 2)), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 3"),
    (lambda x, o: x.index_add_(0, fb.tensor([0, 3]), fb.ones(2, 4)), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x, o: x.index_copy_(0, fb.tensor([0, 3]), fb.ones(2, 4)), IndexError,
     "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x, o: x.index_fill_(1, fb.tensor([0, 9]), 1.0), IndexError,
     "index 9 is out of bounds for dimension 1 with size 4"),
    (lambda x, o: fb.gather(x, 1, fb.tensor([[0, 1, 2, 3], [0, 0, 4, 0], [1, 1, 1, 1]]), out=o), RuntimeError,
     "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x, o: fb.scatter(x, 0, fb.tensor([[3]]), 1.0, out=o), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x, o: fb.index_select(x, 0, fb.tensor([0, 1, 5]), out=o), IndexError, "index out of range in self"),
    (lambda x, o: fb.take(x, fb.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 12]]), out=o), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda x, o: x.masked_scatter_(fb.ones(3, 4, dtype=fb.bool), fb.ones(5)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda x, o: x.scatter_reduce_(0, fb.tensor([[0, 3]]), fb.ones(1, 2), "amax"), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
])
def test_bad_index_raises_before_writing(call, exc, message):
    x = fb.arange(12.0).view(3, 4)
    o = fb.full((3, 4), -1.0)
    version = x._version_counter[0]
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        call(x, o)
    np.testing.assert_array_equal(x.numpy(), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(o.numpy(), np.full((3, 4), -1.0))
    assert x._version_counter[0] == version


def test_inplace_forms_bump_the_version_and_return_self():
    x = fb.zeros(3, 4)
    for name, args in [("scatter_", (0, fb.tensor([[1]]), 1.0)), ("scatter_add_", (0, fb.tensor([[1]]), fb.ones(1, 1))),
                       ("scatter_reduce_", (0, fb.tensor([[1]]), fb.ones(1, 1), "sum")),
                       ("index_add_", (0, fb.tensor([1]), fb.ones(1, 4))),
                       ("index_copy_", (0, fb.tensor([1]), fb.ones(1, 4))),
                       ("index_fill_", (0, fb.tensor([1]), 2.0)), ("masked_fill_", (x > 0, 3.0)),
                       ("masked_scatter_", (x > 0, fb.ones(12)))]:
        before = x._version_counter[0]
        assert getattr(x, name)(*args) is x
        assert x._version_counter[0] == before + 1


def test_scatter_in_place_with_src_aliasing_self():
    x = fb.arange(6.0)
    x.scatter_(0, fb.tensor([5, 4, 3, 2, 1, 0]), x)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0)[::-1])


def test_scatter_reduce_integer_mean_rounds_down():
    x = fb.tensor([0, -1, 0])
    out = fb.scatter_reduce(x, 0, fb.tensor([1, 1]), fb.tensor([3, -5]), "mean")
    np.testing.assert_array_equal(out.numpy(), [0, (-1 + 3 - 5) // 3, 0])


def test_where_single_argument_and_method():
    c = fb.tensor([[0, 1], [2, 0]])
    rows, cols = fb.where(c)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert fb.tensor([1.0, 2.0]).where(fb.tensor([True, False]), 0.0).tolist() == [1.0, 0.0]
    assert fb.argwhere(c).tolist() == [[0, 1], [1, 0]]


def test_masked_select_and_nonzero_take_out():
    x = fb.tensor([[0.0, 1.0], [2.0, 0.0]])
    out = fb.empty(0)
    assert fb.masked_select(x, x > 0, out=out) is out
    assert out.tolist() == [1.0, 2.0]
    coords = fb.empty(0, dtype=fb.int64)
    assert fb.nonzero(x, out=coords) is coords
    assert coords.tolist() == [[0, 1], [1, 0]]
    with pytest.warns(UserWarning, match="was resized"):
        fb.masked_select(x, x > 0, out=fb.empty(5))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        fb.masked_select(x, x > 0, out=fb.empty(0, dtype=fb.int64))


def test_index_and_mask_that_alias_the_written_tensor_are_read_first():
    x = fb.tensor([2, 0, 1])
    x.scatter_(0, x, fb.tensor([7, 8, 9]))  # the index is the tensor being written
    want = np.array([2, 0, 1])
    want[np.array([2, 0, 1])] = [7, 8, 9]
    np.testing.assert_array_equal(x.numpy(), want)
    m = fb.tensor([True, False, True])
    m.masked_fill_(m, False)
    assert m.tolist() == [False, False, False]
    b = fb.tensor([True, False, True])
    b.masked_scatter_(b, fb.tensor([False, True]))
    assert b.tolist() == [False, False, True]


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean", "sum"])
def test_scatter_and_index_reduce_with_nan_give_nan_without_warnings(reduce):
    """A NaN reaches its slot through every reduction, as in PyTorch, and no numpy RuntimeWarning
    escapes to the user (numpy's maximum.at warned "invalid value encountered")."""
    import math
    import warnings

    x = fb.tensor([1.0, math.nan, 3.0, 2.0])
    index = fb.tensor([0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scattered = fb.zeros(2).scatter_reduce(0, index, x, reduce).tolist()
        indexed = fb.zeros(2).index_reduce(0, index, x, "prod" if reduce == "sum" else reduce).tolist()
    assert math.isnan(scattered[0]) and math.isnan(indexed[0])

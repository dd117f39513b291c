"""``tensor[index]`` and ``tensor[index] = value``: basic and advanced indexing with PyTorch's semantics.

PyTorch applies ints, slices, None and Ellipsis first, as views, and then the index tensors; numpy
treats an int next to an index array as one more index array. The two agree whenever no int is
mixed with index arrays, and the property tests compare with numpy there and with a two-step
reference elsewhere. Expected values and messages are PyTorch 2.x's.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def x234():
    return fb.arange(24).view(2, 3, 4)


# -- reading: basic --------------------------------------------------------------------------------

def test_basic_reads_are_views():
    x = fb.arange(12).view(3, 4)
    assert x[1:10:2].tolist() == [[4, 5, 6, 7]]
    assert x[-2:].tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert x[:, -1].tolist() == [3, 7, 11]
    assert x[-10:1].tolist() == [[0, 1, 2, 3]] and x[5:].shape == (0, 4) and x[2:1].shape == (0, 4)
    assert x[:, ::3].tolist() == [[0, 3], [4, 7], [8, 11]]
    assert x[None].shape == (1, 3, 4) and x[None, None, ..., None].shape == (1, 1, 3, 4, 1)
    assert x[..., 1].shape == (3,) and x[1, ...].shape == (4,) and x[...].shape == (3, 4)
    assert x[:, None, 1].shape == (3, 1)
    assert x[np.int64(1)].tolist() == [4, 5, 6, 7]
    row = x[1]
    row[0] = -1
    assert x[1, 0].item() == -1 and row._version_counter is x._version_counter
    scalar_index = x[fb.tensor(2)]  # a 0-dim integer tensor acts as an int: a view
    scalar_index[0] = -5
    assert x[2, 0].item() == -5 and scalar_index.shape == (4,)


def test_python_bools_add_a_dim():
    x = fb.arange(12).view(3, 4)
    assert x[True].shape == (1, 3, 4) and x[False].shape == (0, 3, 4)
    assert x[True, 1].shape == (1, 4) and x[1, False].shape == (0, 4)
    assert x[fb.tensor(True)].shape == (1, 3, 4)
    s = fb.tensor(5.)
    assert s[None].shape == (1,) and s[...].shape == () and s[True].shape == (1,) and s[False].shape == (0,)


@pytest.mark.parametrize("index, error, message", [
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((1, -5), IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (1.5, IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      "indices (got float)"),
    ("a", IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      "indices (got str)"),
    ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis ('...')"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    (slice(None, None, 0), ValueError, "step must be greater than zero"),
])
def test_basic_index_errors(index, error, message):
    x = fb.arange(12).view(3, 4)
    with pytest.raises(error) as info:
        x[index]
    assert str(info.value) == message


def test_zero_dim_index_error():
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        fb.tensor(5.)[0]


# -- reading: advanced -----------------------------------------------------------------------------

def test_pytorch_placement_differs_from_numpy_for_an_int_and_an_array():
    x = x234()
    assert x[0, :, [1, 2]].shape == (3, 2)  # numpy gives (2, 3)
    assert x[0, :, [1, 2]].tolist() == [[1, 2], [5, 6], [9, 10]]
    assert np.arange(24).reshape(2, 3, 4)[0, :, [1, 2]].shape == (2, 3)


def test_advanced_shapes():
    x = x234()
    assert x[[0, 1], :, [1, 2]].shape == (2, 3)  # separated arrays: their dims go first
    assert x[:, [0, 1]].shape == (2, 2, 4)
    assert x[..., [0, 1]].shape == (2, 3, 2)
    assert x[:, [[0], [1]], [1, 2]].shape == (2, 2, 2)
    assert x[:, None, [0, 2], None, [1, 3]].shape == (2, 2, 1, 1)
    assert x[[1, 0], 1:, None, [3, 2]].tolist() == [[[19], [23]], [[6], [10]]]
    assert x[[0, 1], [0, 1], [0, 1]].tolist() == [0, 17]
    assert x[[0], [1]].tolist() == [[4, 5, 6, 7]]
    assert x[fb.tensor([[0, 1], [1, 0]])].shape == (2, 2, 3, 4)
    assert x[:, :, None][[1]].shape == (1, 3, 1, 4)


def test_masks():
    x = x234()
    assert x[x > 20].tolist() == [21, 22, 23]
    assert x[x[:, 0, 0] > 0].shape == (1, 3, 4)
    assert x[:, x[0, :, 0] > 3].shape == (2, 2, 4)
    assert x[0][x[0] > 5].shape == (6,)
    m = fb.tensor([[True, False, True, False], [False] * 4, [True] * 4])
    assert fb.arange(12).view(3, 4)[m].tolist() == [0, 2, 8, 9, 10, 11]
    y = fb.arange(12).view(3, 4)
    assert y[:, np.array([True, False, True, False])].tolist() == [[0, 2], [4, 6], [8, 10]]
    assert y[[True, False, True]].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    with pytest.warns(UserWarning, match="indexing with dtype flambeau.uint8 is now deprecated"):
        assert y[fb.tensor([1, 0, 1], dtype=fb.uint8)].shape == (2, 4)


def test_index_sequences():
    y = fb.arange(12).view(3, 4)
    assert y[[0, 2]].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert y[[[0, 2]]].tolist() == y[[0, 2]].tolist()  # a list holding a list is a tuple index (legacy rule)
    assert y[([0, 2],)].tolist() == y[[0, 2]].tolist()
    assert y[[0, slice(None)]].tolist() == [0, 1, 2, 3]
    assert y[[]].shape == (0, 4) and y[[], 0].shape == (0,)
    assert y[fb.tensor([], dtype=fb.int64)].shape == (0, 4)
    assert y[np.array([0, 2])].shape == (2, 4)
    assert y[[0.0, 1.7]].tolist() == y[[0, 1]].tolist()  # float lists become int64, like PyTorch
    assert y[fb.tensor([0, 2], dtype=fb.int32)].shape == (2, 4)
    assert y[[-1, -3], [-1, 0]].tolist() == [11, 0]
    assert fb.arange(5)[fb.tensor([[0, 1], [2, 3]])].tolist() == [[0, 1], [2, 3]]


def test_advanced_reads_are_copies():
    y = fb.arange(12).view(3, 4)
    picked = y[[0, 1]]
    picked[0, 0] = 100
    assert y[0, 0].item() == 0
    assert y[1][[0, 0]].tolist() == [4, 4]


@pytest.mark.parametrize("index, error, message", [
    ([0, 5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ([0, -4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    ((slice(None), [0, 4]), IndexError, "index 4 is out of bounds for dimension 1 with size 4"),
    (fb.tensor([0., 1.]), IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    (([0, 1], [0, 1, 2]), IndexError,
     "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"),
    (([0, 1], [0, 1], [0]), IndexError, "too many indices for tensor of dimension 2"),
    (fb.tensor([True, False]), IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"),
    ((slice(None), fb.tensor([True, False, True])), IndexError,
     "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [3, 4] at index 1"),
])
def test_advanced_index_errors(index, error, message):
    with pytest.raises(error) as info:
        fb.arange(12).view(3, 4)[index]
    assert str(info.value) == message


# -- writing -------------------------------------------------------------------------------------

def test_basic_writes():
    x = fb.zeros(3, 4)
    x[1:, 0] = 5
    x[0] = fb.tensor([1., 2., 3., 4.])
    x[:, 1] = fb.tensor([[7., 8., 9.]])  # leading size-1 dims of the value are dropped
    assert x.tolist() == [[1., 7., 3., 4.], [5., 8., 0., 0.], [5., 9., 0., 0.]]
    x[...] = fb.tensor([1., 2., 3., 4.])  # broadcast
    assert x.tolist() == [[1., 2., 3., 4.]] * 3
    y = fb.zeros(3, dtype=fb.int64)
    y[2] = 3.9
    assert y.tolist() == [0, 0, 3]
    z = fb.zeros(4)
    z[1:3] = [5, 6]
    assert z.tolist() == [0., 5., 6., 0.]
    w = fb.arange(6.).view(2, 3)
    w[None, 0, ..., None] = 3
    assert w.tolist() == [[3., 3., 3.], [3., 4., 5.]]
    with pytest.raises(RuntimeError) as info:
        fb.zeros(4)[1:3] = fb.tensor([1., 2., 3.])
    assert str(info.value) == ("The expanded size of the tensor (2) must match the existing size (3) at "
                               "non-singleton dimension 0.  Target sizes: [2].  Tensor sizes: [3]")
    with pytest.raises(RuntimeError) as info:
        fb.zeros(4, 2)[0] = fb.ones(3, 2)
    assert str(info.value) == ("expand(flambeau.FloatTensor{[3, 2]}, size=[2]): the number of sizes provided (1) "
                               "must be greater or equal to the number of dimensions in the tensor (2)")


def test_advanced_writes():
    x = fb.zeros(3, 4)
    x[x == 0] = 1
    assert x.tolist() == [[1.] * 4] * 3
    x[[0, 2], [1, 3]] = fb.tensor([7., 8.])
    x[2, [0, 1]] = 9
    assert x.tolist() == [[1., 7., 1., 1.], [1., 1., 1., 1.], [9., 9., 1., 8.]]
    y = fb.zeros(3, dtype=fb.int64)
    y[[0, 1]] = 2.7
    assert y.tolist() == [2, 2, 0]
    f = fb.zeros(3)
    f[[0, 1]] = fb.tensor([1, 2])  # the value is cast to the destination dtype
    assert f.tolist() == [1., 2., 0.]
    g = fb.zeros(2, 3)
    g[:, [True, False, True]] = fb.tensor([1., 2.])
    assert g.tolist() == [[1., 0., 2.], [1., 0., 2.]]
    h = fb.zeros(2, 3)
    h[h == 0] = fb.arange(6.)
    assert h.tolist() == [[0., 1., 2.], [3., 4., 5.]]


def test_advanced_write_through_view_bumps_shared_version():
    x = fb.zeros(2, 3)
    v = x[1]
    x[[1], [0]] = 4
    assert v.tolist() == [4., 0., 0.] and x._version_counter[0] == 1 and v._version_counter is x._version_counter
    m = fb.zeros(2, 3)
    m[fb.tensor([[True, False, True], [False, True, False]])] = -1
    assert m.tolist() == [[-1., 0., -1.], [0., -1., 0.]] and m._version_counter[0] == 1
    n = fb.arange(12.).view(3, 4)
    n[0, [1, 3]] = 0  # the int applies first, as a view; the write still reaches n
    assert n[0].tolist() == [0., 0., 2., 0.]


@pytest.mark.parametrize("index, value, error, message", [
    ("mask", fb.tensor([1., 2.]), RuntimeError,
     "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [12]"),
    ([0, 1], fb.ones(3, 4), RuntimeError,
     "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to indexing result of shape [2, 4]"),
    ([0, 7], 1, IndexError, "index 7 is out of bounds for dimension 0 with size 3"),
])
def test_write_errors_change_nothing(index, value, error, message):
    x = fb.zeros(3, 4)
    key = x == 0 if index == "mask" else index
    with pytest.raises(error) as info:
        x[key] = value
    assert str(info.value) == message
    assert x.tolist() == [[0.] * 4] * 3 and x._version_counter[0] == 0


def test_index_put():
    x = fb.zeros(3)
    assert x.index_put_((fb.tensor([0, 0, 2]),), fb.tensor(1.), accumulate=True).tolist() == [2., 0., 1.]
    y = fb.zeros(3)
    z = y.index_put((fb.tensor([0, 2]),), fb.tensor([5., 6.]))
    assert y.tolist() == [0., 0., 0.] and z.tolist() == [5., 0., 6.]
    assert fb.index_put(fb.zeros(2, 2), [None, fb.tensor([1])], fb.tensor(1.)).tolist() == [[0., 1.], [0., 1.]]
    with pytest.raises(RuntimeError) as info:
        fb.zeros(3).index_put_((fb.tensor([0]),), fb.tensor([1]))
    assert str(info.value) == ("Index put requires the source and destination dtypes match, got Float for the "
                               "destination and Long for the source.")


# -- properties ------------------------------------------------------------------------------------

@st.composite
def index_case(draw, allow_ints_with_arrays: bool):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    items = []
    dim = 0
    use_arrays = draw(st.booleans())
    while dim < len(shape) and draw(st.integers(0, 4)) > 0:
        size = shape[dim]
        choices = ["slice", "none"]
        if use_arrays:
            choices += ["array", "mask"]
        if allow_ints_with_arrays or not use_arrays:
            choices.append("int")
        kind = draw(st.sampled_from(choices))
        if kind == "none":
            items.append(None)
            continue
        if kind == "slice":
            items.append(slice(draw(st.integers(-size - 1, size + 1) | st.none()),
                               draw(st.integers(-size - 1, size + 1) | st.none()), draw(st.integers(1, 3))))
        elif kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "array":
            items.append(draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3)))
        else:
            items.append(draw(st.lists(st.booleans(), min_size=size, max_size=size)))
        dim += 1
    if draw(st.booleans()) and dim < len(shape):
        items.append(Ellipsis)  # at the end, so that every mask still meets the dim it was sized for
    arrays = [i for i in items if isinstance(i, list) and not isinstance(i[0], bool)]
    # index arrays broadcast together: keep them the same length
    if len(arrays) > 1:
        n = min(len(a) for a in arrays)
        items = [i[:n] if isinstance(i, list) and not isinstance(i[0], bool) else i for i in items]
    masks = [i for i in items if isinstance(i, list) and isinstance(i[0], bool)]
    if masks and arrays:  # a mask's nonzero count must broadcast with the arrays: keep only masks then
        items = [slice(None) if isinstance(i, list) and not isinstance(i[0], bool) else i for i in items]
    if len(masks) > 1:
        first = items.index(masks[0])
        items = [slice(None) if isinstance(i, list) and isinstance(i[0], bool) and k != first else i
                 for k, i in enumerate(items)]
    return shape, tuple(items)


def numpy_key(items):
    return tuple(np.array(i) if isinstance(i, list) else i for i in items)


def two_step_reference(base: np.ndarray, items: tuple) -> np.ndarray:
    """PyTorch's rule with numpy: ints/slices/None as a view first, then the arrays on the dims left."""
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    basic, arrays, view_dim = [], {}, 0
    for item in items:
        if item is Ellipsis:
            fill = base.ndim - used
            basic += [slice(None)] * fill
            view_dim += fill
        elif item is None:
            basic.append(None)
            view_dim += 1
        elif isinstance(item, slice):
            basic.append(item)
            view_dim += 1
        elif isinstance(item, int):
            basic.append(item)
        else:
            arrays[view_dim] = np.array(item)
            basic.append(slice(None))
            view_dim += 1
    view = base[tuple(basic)]
    if not arrays:
        return view
    return view[tuple(arrays.get(d, slice(None)) for d in range(max(arrays) + 1))]


@settings(max_examples=150, deadline=None)
@given(index_case(allow_ints_with_arrays=False))
def test_reads_match_numpy(case):
    shape, items = case
    base = np.arange(math.prod(shape)).reshape(shape)
    result = fb.from_numpy(base)[items]
    expected = base[numpy_key(items)]
    assert tuple(result.shape) == expected.shape
    np.testing.assert_array_equal(result.numpy(), expected)


@settings(max_examples=150, deadline=None)
@given(index_case(allow_ints_with_arrays=True))
def test_reads_match_two_step_rule(case):
    shape, items = case
    base = np.arange(math.prod(shape)).reshape(shape)
    result = fb.from_numpy(base)[items]
    expected = two_step_reference(base, items)
    assert tuple(result.shape) == expected.shape
    np.testing.assert_array_equal(result.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(index_case(allow_ints_with_arrays=False), st.integers(-50, -1))
def test_scalar_writes_match_numpy(case, value):
    shape, items = case
    expected = np.arange(math.prod(shape)).reshape(shape)
    t = fb.tensor(expected)
    t[items] = value
    expected[numpy_key(items)] = value
    np.testing.assert_array_equal(t.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(index_case(allow_ints_with_arrays=False))
def test_tensor_writes_match_numpy(case):
    shape, items = case
    expected = np.arange(math.prod(shape)).reshape(shape)
    target_shape = expected[numpy_key(items)].shape
    value = -np.arange(math.prod(target_shape)).reshape(target_shape) - 1
    t = fb.tensor(expected)
    t[items] = fb.tensor(value)
    expected[numpy_key(items)] = value
    np.testing.assert_array_equal(t.numpy(), expected)

"""Memory is shared with numpy, never the array object.

``Tensor.numpy()`` and ``np.asarray(tensor)`` return a new view each time, and ``from_numpy`` /
``as_tensor`` keep a view of their own of the caller's array, so that changing an array's
metadata in place (``shape``, ``dtype``, ``strides``, ``resize``, ``setflags``) never changes a
tensor behind its back, while writes to the elements show on both sides.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def _set_strides(array: np.ndarray, strides: tuple) -> None:
    with warnings.catch_warnings():  # deprecated in numpy 2.4, and still possible: it must not reach a tensor
        warnings.simplefilter("ignore", DeprecationWarning)
        array.strides = strides


def _tensors():
    """A contiguous tensor and non-contiguous views of the same values."""
    base = fb.arange(12.).view(3, 4)
    return {"contiguous": base, "transposed": base.clone().t(), "sliced": base.clone()[:, ::2],
            "offset": base.clone()[1:, 1:]}


EXPORTS = {"numpy": lambda t: t.numpy(), "asarray": np.asarray, "array_no_copy": lambda t: t.__array__()}


@pytest.mark.parametrize("export", sorted(EXPORTS))
@pytest.mark.parametrize("layout", sorted(_tensors()))
def test_exported_array_metadata_changes_leave_the_tensor_alone(export, layout):
    t = _tensors()[layout]
    shape, stride, dtype, values = tuple(t.shape), t.stride(), t.dtype, t.tolist()
    first = EXPORTS[export](t)
    assert first is not EXPORTS[export](t) and np.shares_memory(first, EXPORTS[export](t))
    a = EXPORTS[export](t)
    a.shape = a.shape + (1,)
    a = EXPORTS[export](t)
    a.dtype = np.int32  # reinterpret the view's bytes: the tensor still reads floats
    a = EXPORTS[export](t)
    _set_strides(a, (0,) * a.ndim)
    a = EXPORTS[export](t)
    a.setflags(write=False)
    with pytest.raises(ValueError):
        EXPORTS[export](t).resize((100,))  # a view never owns the data
    assert (tuple(t.shape), t.stride(), t.dtype, t.tolist()) == (shape, stride, dtype, values)
    t[0, 0] = -5.  # still writable, and still shared
    assert EXPORTS[export](t)[0, 0] == -5. and first[0, 0] == -5.


@pytest.mark.parametrize("share", [fb.from_numpy, fb.as_tensor, fb.asarray])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_source_array_metadata_changes_leave_the_tensor_alone(share, layout):
    owner = np.arange(12.).reshape(3, 4)
    a = {"contiguous": owner, "transposed": owner.T, "sliced": owner[:, ::2]}[layout]
    pristine = owner[...]  # a view of the same memory with metadata of its own, to check writes through
    t = share(a)
    shape, stride, values = tuple(t.shape), t.stride(), t.tolist()
    a.shape = a.shape + (1,)
    a.shape = a.shape[:-1]
    a.dtype = np.int64  # same size, other meaning
    _set_strides(a, (0,) * a.ndim)
    a.setflags(write=False)
    with pytest.raises(ValueError):
        owner.resize((100,), refcheck=True)  # numpy refuses: the tensor's view references it
    assert (tuple(t.shape), t.stride(), t.dtype, t.tolist()) == (shape, stride, fb.float64, values)
    t[0, 0] = 42.  # the tensor's own view stays writable, and shares the memory
    assert pristine[0, 0] == 42.
    pristine[2, 2] = -1.  # an element every layout above includes
    assert (t == -1).sum().item() == 1


def test_writes_are_shared_both_ways_after_metadata_changes():
    a = np.zeros(4)
    t = fb.from_numpy(a)
    a.shape = (2, 2)
    a[1, 1] = 3.
    t[0] = 1.
    assert t.tolist() == [1., 0., 0., 3.] and a.tolist() == [[1., 0.], [0., 3.]]


def test_storage_is_a_plain_ndarray_for_subclasses():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1., 2.], [3., 4.]])
    t = fb.from_numpy(m)
    assert type(t.numpy()) is np.ndarray and tuple(t.shape) == (2, 2)
    m[0, 0] = 9.
    assert t[0, 0].item() == 9.
    masked = np.ma.masked_array([1., 2., 3.], mask=[False, True, False])
    for convert in (fb.from_numpy, fb.as_tensor):
        mt = convert(masked)
        assert type(mt.numpy()) is np.ndarray and mt.tolist() == [1., 2., 3.]  # the mask is dropped
    copied = fb.tensor(masked)
    assert copied.tolist() == [1., 2., 3.] and type(copied.numpy()) is np.ndarray
    assert type(np.asarray(fb.tensor(m))) is np.ndarray and fb.tensor(m).shape == (2, 2)


def test_memmap_is_shared_as_a_plain_array(tmp_path):
    mm = np.memmap(tmp_path / "data.bin", dtype=np.float32, mode="w+", shape=(4,))
    t = fb.from_numpy(mm)
    assert type(t.numpy()) is np.ndarray
    t[2] = 5.
    assert mm[2] == 5.
    mm.flush()
    assert np.fromfile(tmp_path / "data.bin", dtype=np.float32)[2] == 5.


def test_numpy_view_keeps_the_tensor_storage_alive():
    a = fb.arange(4.).numpy()
    b = np.asarray(fb.arange(3))
    import gc
    gc.collect()
    assert a.tolist() == [0., 1., 2., 3.] and b.tolist() == [0, 1, 2]


MUTATIONS = {
    "shape": lambda a: setattr(a, "shape", a.shape + (1,)),
    "dtype": lambda a: setattr(a, "dtype", np.int32),
    "strides": lambda a: _set_strides(a, (0,) * a.ndim),
    "readonly": lambda a: a.setflags(write=False),
}


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_no_array_handed_out_or_taken_in_is_the_tensors_storage(shape, data):
    """Whatever view a tensor is, and however it was made, metadata changes on any array that
    went in or came out leave it alone."""
    source = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    steps = tuple(data.draw(st.sampled_from([slice(None), slice(None, None, 2), slice(1, None)])) for _ in shape)
    source = source[steps]
    t = data.draw(st.sampled_from([fb.from_numpy, fb.as_tensor]))(source)
    if data.draw(st.booleans()) and t.ndim > 1:
        t = t.transpose(0, -1)
    snapshot = (tuple(t.shape), t.stride(), t.dtype, t.tolist())
    for array in (source, t.numpy(), np.asarray(t)):
        data.draw(st.sampled_from(sorted(MUTATIONS)).map(MUTATIONS.get))(array)
    assert (tuple(t.shape), t.stride(), t.dtype, t.tolist()) == snapshot
    if t.numel():
        t[(0,) * t.ndim] = 7.  # the tensor's own view stays writable
        assert t[(0,) * t.ndim].item() == 7.

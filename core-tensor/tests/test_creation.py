"""Creating tensors: tensor(), as_tensor, from_numpy, filled factories, ranges, the legacy constructor.

Expected values and messages are PyTorch 2.x's.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import flambeau as fb


def same(t, values, dtype):
    assert t.dtype is dtype, (t.dtype, dtype)
    np.testing.assert_array_equal(t.numpy(), np.asarray(values))


# -- tensor(): inference ------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype, shape", [
    ([[1, 2], [3, 4]], fb.int64, (2, 2)),
    ([1, 2.5], fb.float32, (2,)),
    ([True, False], fb.bool, (2,)),
    ([1, True], fb.int64, (2,)),
    ([1j, 2], fb.complex64, (2,)),
    (3, fb.int64, ()),
    (3.5, fb.float32, ()),
    ([], fb.float32, (0,)),
    ([[], []], fb.float32, (2, 0)),
    (((1, 2), (3, 4)), fb.int64, (2, 2)),
    ([[[1]]], fb.int64, (1, 1, 1)),
    (np.array([1, 2], dtype=np.int32), fb.int32, (2,)),
    (np.array([1., 2.]), fb.float64, (2,)),
    (np.float32(2.5), fb.float32, ()),
    (np.array(5), fb.int64, ()),
    (np.zeros((2, 0)), fb.float64, (2, 0)),
    ([np.float64(1.5), 2], fb.float64, (2,)),  # numpy scalars keep their dtype in lists
    ([np.float32(1), 2.0], fb.float32, (2,)),
    ([np.int32(1), 2], fb.int64, (2,)),
    ([np.int32(1), np.int16(2)], fb.int32, (2,)),
    ([True, np.int8(3)], fb.int8, (2,)),
    ([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)], fb.int32, (2, 2)),
    ([np.array([1., 2.]), [3, 4]], fb.float64, (2, 2)),
])
def test_tensor_infers_dtype_and_shape(data, dtype, shape):
    t = fb.tensor(data)
    assert t.dtype is dtype
    assert t.shape == shape


def test_tensor_of_zero_dim_tensors_promotes():
    assert fb.tensor([fb.tensor(1, dtype=fb.int32), 2]).dtype is fb.int64
    x = fb.tensor([fb.tensor(1.5, dtype=fb.float64), 2])
    same(x, [1.5, 2.0], fb.float64)


def test_tensor_copies():
    a = np.array([1., 2.])
    t = fb.tensor(a)
    a[0] = 9
    assert t.tolist() == [1., 2.]
    src = fb.tensor([1, 2])
    with pytest.warns(UserWarning, match="clone\\(\\).detach\\(\\)"):
        copy_ = fb.tensor(src)
    copy_[0] = 5
    assert src.tolist() == [1, 2]


def test_tensor_with_dtype_casts():
    same(fb.tensor([1, 2], dtype=fb.float64), [1., 2.], fb.float64)
    same(fb.tensor([1.7, -1.7], dtype=fb.int32), [1, -1], fb.int32)  # truncation toward zero
    same(fb.tensor(-1, dtype=fb.uint8), 255, fb.uint8)  # PyTorch wraps negatives down to -max


@pytest.mark.parametrize("data, dtype, name", [(300, fb.uint8, "uint8"), (200, fb.int8, "int8"),
                                               ([1e10], fb.int32, "int32"), ([-1.5], fb.uint8, "uint8")])
def test_tensor_overflow(data, dtype, name):
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} without overflow"):
        fb.tensor(data, dtype=dtype)


@pytest.mark.parametrize("data, error, message", [
    ([[1, 2], [3]], ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
    ([[1, 2], 3], TypeError, "not a sequence"),
    ([[1], 2.5], TypeError, "not a sequence"),
    ([1, [2, 3]], TypeError, "'list' object cannot be interpreted as an integer"),
    ([1.5, [2]], TypeError, "must be real number, not list"),
    ("abc", TypeError, "new(): invalid data type 'str'"),
    ([1, "a"], TypeError, "new(): invalid data type 'str'"),
    ([None], RuntimeError, "Could not infer dtype of NoneType"),
    (None, RuntimeError, "Could not infer dtype of NoneType"),
    ({1: 2}, RuntimeError, "Could not infer dtype of dict"),
    ([2 ** 63], ValueError, "Overflow when unpacking long long"),
    ([1, 2 ** 64], ValueError, "Overflow when unpacking long long"),
    (2 ** 63, ValueError, "Overflow when unpacking long long"),
    ([fb.tensor([1, 2]), fb.tensor([3, 4])], TypeError,
     "only integer tensors of a single element can be converted to an index"),
])
def test_tensor_errors(data, error, message):
    with pytest.raises(error) as info:
        fb.tensor(data)
    assert str(info.value) == message


def test_tensor_requires_grad_flag_without_value_change():
    t = fb.tensor([1., 2.], requires_grad=False)
    assert not t.requires_grad


# -- sharing memory -------------------------------------------------------------------------

def test_as_tensor_shares_numpy_memory():
    a = np.array([1., 2.])
    t = fb.as_tensor(a)
    a[0] = 9
    assert t.tolist() == [9., 2.]
    converted = fb.as_tensor(a, dtype=fb.float32)
    a[1] = 7
    assert converted.tolist() == [9., 2.]  # a cast is a copy
    src = fb.tensor([1, 2])
    assert fb.as_tensor(src) is src
    same(fb.as_tensor(src, dtype=fb.float32), [1., 2.], fb.float32)
    same(fb.as_tensor([1, 2]), [1, 2], fb.int64)
    assert fb.asarray is fb.as_tensor


def test_from_numpy_shares_both_ways():
    a = np.zeros(3)
    t = fb.from_numpy(a)
    t[1] = 5
    t.add_(1)
    np.testing.assert_array_equal(a, [1., 6., 1.])
    b = np.arange(6.).reshape(2, 3)
    u = fb.from_numpy(b)
    b[1, 1] = -1
    assert u[1, 1].item() == -1
    strided = fb.from_numpy(np.arange(10)[::2])
    assert strided.stride() == (2,) and strided.shape == (5,)


def test_non_native_byte_order_is_refused():
    big_endian = np.arange(3, dtype=">f8")
    for make in (fb.tensor, fb.as_tensor, fb.from_numpy):
        with pytest.raises(ValueError, match="given numpy array has byte order different from the native"):
            make(big_endian)


def test_from_numpy_errors():
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        fb.from_numpy(np.arange(5)[::-1])
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        fb.from_numpy([1, 2])


# -- filled factories -----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda f: f(2, 3), lambda f: f((2, 3)), lambda f: f([2, 3]), lambda f: f(fb.Size([2, 3])),
    lambda f: f(size=(2, 3)),
])
@pytest.mark.parametrize("name, value", [("zeros", 0.), ("ones", 1.)])
def test_size_forms(call, name, value):
    t = call(getattr(fb, name))
    same(t, np.full((2, 3), value), fb.float32)
    assert call(fb.empty).shape == (2, 3)


def test_filled_factories():
    assert fb.zeros(()).shape == () and fb.zeros(0).shape == (0,)
    same(fb.ones(2, dtype=fb.int32), [1, 1], fb.int32)
    same(fb.full((2, 2), 7), np.full((2, 2), 7), fb.int64)
    same(fb.full((2,), 1.5), [1.5, 1.5], fb.float32)
    same(fb.full((2,), True), [True, True], fb.bool)
    same(fb.full([2], 3, dtype=fb.float64), [3., 3.], fb.float64)
    same(fb.full((2,), 1.5, dtype=fb.int64), [1, 1], fb.int64)
    same(fb.full((2,), fb.tensor(4)), [4, 4], fb.int64)
    assert fb.empty(2, 3, dtype=fb.int64).dtype is fb.int64
    same(fb.zeros(2, 2, dtype=fb.complex64), np.zeros((2, 2)), fb.complex64)
    same(fb.ones(2, dtype=fb.bfloat16).float(), [1., 1.], fb.float32)


def test_out_argument():
    o = fb.empty(5)
    r = fb.zeros(2, 3, out=o)
    assert r is o and o.shape == (2, 3) and o.tolist() == [[0.] * 3] * 2
    o = fb.empty(6, dtype=fb.int64)
    fb.ones((2, 3), out=o)
    same(o, np.ones((2, 3)), fb.int64)
    o = fb.empty(2, dtype=fb.int64)
    fb.full((2,), 1.5, out=o)
    same(o, [1, 1], fb.int64)
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Long\)"):
        fb.zeros(2, out=fb.empty(2, dtype=fb.int64), dtype=fb.float32)


@pytest.mark.parametrize("call, error, message", [
    (lambda: fb.zeros(2, -1), RuntimeError, "zeros: Dimension size must be non-negative."),
    (lambda: fb.empty(-1), RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    (lambda: fb.ones(2, -3), RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"),
    (lambda: fb.full((2, -1), 1.), RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]"),
    (lambda: fb.zeros(2.5), TypeError, "zeros(): argument 'size' (position 1) must be tuple of ints, not float"),
    (lambda: fb.zeros("a"), TypeError, "zeros(): argument 'size' (position 1) must be tuple of ints, not str"),
    (lambda: fb.zeros(2, 2.5), TypeError,
     "zeros(): argument 'size' failed to unpack the object at pos 2 with error "
     "\"type must be tuple of ints,but got float\""),
    (lambda: fb.full(2, 3), TypeError, "full(): argument 'size' (position 1) must be tuple of ints, not int"),
])
def test_size_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_like_factories():
    x = fb.tensor([[1, 2], [3, 4]])
    same(fb.zeros_like(x), np.zeros((2, 2)), fb.int64)
    same(fb.ones_like(x, dtype=fb.float32), np.ones((2, 2)), fb.float32)
    same(fb.full_like(x, 7), np.full((2, 2), 7), fb.int64)
    same(fb.full_like(x, 2.5), np.full((2, 2), 2), fb.int64)  # the value is cast to the input's dtype
    assert fb.empty_like(x).shape == (2, 2)
    y = fb.tensor([1., 2.])
    same(fb.full_like(y, 3), [3., 3.], fb.float32)
    same(fb.zeros_like(y, dtype=fb.bool), [False, False], fb.bool)
    same(x.new_zeros(2, 3), np.zeros((2, 3)), fb.int64)
    same(y.new_ones((2,)), [1., 1.], fb.float32)
    same(x.new_full((2,), 3.5), [3, 3], fb.int64)
    same(x.new_tensor([3.5]), [3], fb.int64)
    same(x.new_tensor([3.5], dtype=fb.float64), [3.5], fb.float64)
    assert x.new_empty(2).shape == (2,)


# -- ranges -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, values, dtype", [
    ((5,), {}, [0, 1, 2, 3, 4], fb.int64),
    ((1, 4), {}, [1, 2, 3], fb.int64),
    ((1, 10, 3), {}, [1, 4, 7], fb.int64),
    ((0, 1, 0.25), {}, [0, 0.25, 0.5, 0.75], fb.float32),
    ((5.,), {}, [0., 1., 2., 3., 4.], fb.float32),
    ((1, 2.5, 0.5), {}, [1, 1.5, 2], fb.float32),
    ((10, 0, -3), {}, [10, 7, 4, 1], fb.int64),
    ((0, -1, -0.5), {}, [0, -0.5], fb.float32),
    ((0,), {}, [], fb.int64),
    ((1, 1), {}, [], fb.int64),
    ((1, 2, 0.3), {}, [1., 1.3, 1.6, 1.9], fb.float32),
    ((-1.5, 1.5), {}, [-1.5, -0.5, 0.5], fb.float32),
    ((5,), {"dtype": fb.float64}, [0, 1, 2, 3, 4], fb.float64),
    ((0.5, 3), {"dtype": fb.int64}, [0, 1, 2], fb.int64),
    ((1, 4), {"dtype": fb.float16}, [1, 2, 3], fb.float16),
    ((True,), {}, [0], fb.int64),
    ((0, 2, 0.5), {"dtype": fb.int32}, [0, 0, 0, 0], fb.int32),  # start and step truncated, length exact
    ((-5, 5, 3), {}, [-5, -2, 1, 4], fb.int64),
    ((), {"start": 2, "end": 5}, [2, 3, 4], fb.int64),
    ((), {"end": 3}, [0, 1, 2], fb.int64),
])
def test_arange(args, kwargs, values, dtype):
    result = fb.arange(*args, **kwargs)
    assert result.dtype is dtype
    np.testing.assert_allclose(result.numpy().astype(np.float64), np.asarray(values, dtype=np.float64), rtol=1e-6)


def test_arange_lengths_and_out():
    assert fb.arange(0, 1, 0.1).shape == (10,)  # ceil((end - start) / step)
    assert fb.arange(fb.tensor(3)).tolist() == [0, 1, 2]
    assert fb.arange(fb.tensor(2.5)).dtype is fb.float32
    o = fb.empty(0, dtype=fb.int64)
    fb.arange(4, out=o)
    assert o.tolist() == [0, 1, 2, 3]
    o = fb.empty(3)
    fb.arange(0, 5, out=o)
    same(o, [0., 1., 2., 3., 4.], fb.float32)


@pytest.mark.parametrize("args, error, message", [
    ((0, 10, 0), RuntimeError, "step must be nonzero"),
    ((0, 10, -1), RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ((10, 0), RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ((0, 1, 1e-20), RuntimeError, "invalid size, possible overflow?"),
    (("a",), TypeError, "arange(): argument 'end' (position 2) must be Number, not str"),
])
def test_arange_errors(args, error, message):
    with pytest.raises(error) as info:
        fb.arange(*args)
    assert str(info.value) == message


def test_arange_infinite_bound():
    with pytest.raises(RuntimeError, match="unsupported range"):
        fb.arange(0, float("inf"))


def test_linspace_logspace_eye():
    np.testing.assert_allclose(fb.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))
    assert fb.linspace(-1, 1, 1).tolist() == [-1.]
    assert fb.linspace(0, 10, 0).shape == (0,)
    same(fb.linspace(0, 10, 3, dtype=fb.int64), [0, 5, 10], fb.int64)
    np.testing.assert_allclose(fb.linspace(3, -3, 4).numpy(), [3, 1, -1, -3])
    np.testing.assert_allclose(fb.linspace(fb.tensor(0.), fb.tensor(1.), 3).numpy(), [0, 0.5, 1])
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        fb.linspace(0, 1, -1)
    np.testing.assert_allclose(fb.logspace(0, 2, 3).numpy(), [1, 10, 100])
    np.testing.assert_allclose(fb.logspace(0, 3, 4, base=2).numpy(), [1, 2, 4, 8])
    same(fb.logspace(0, 2, 3, dtype=fb.int64), [1, 10, 100], fb.int64)
    same(fb.eye(3), np.eye(3), fb.float32)
    same(fb.eye(2, 3), np.eye(2, 3), fb.float32)
    same(fb.eye(3, 2), np.eye(3, 2), fb.float32)
    same(fb.eye(2, dtype=fb.int64), np.eye(2), fb.int64)
    assert fb.eye(0).shape == (0, 0) and fb.eye(2, m=4).shape == (2, 4)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        fb.eye(-1)


# -- the legacy constructor, pickling, deepcopy -------------------------------------------------

def test_legacy_constructor():
    same(fb.Tensor([1, 2]), [1., 2.], fb.float32)
    assert fb.Tensor(2, 3).shape == (2, 3) and fb.Tensor(2, 3).dtype is fb.float32
    assert fb.Tensor().shape == (0,)
    assert fb.Tensor(fb.Size([2])).shape == (2,)
    assert fb.Tensor(np.array([1, 2])).dtype is fb.float32
    assert fb.Tensor(3).shape == (3,)
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        fb.Tensor(2.5)
    with pytest.raises(TypeError, match="new\\(\\) received an invalid combination of arguments"):
        fb.Tensor([1, 2], dtype=fb.int32)


@pytest.mark.parametrize("make", [
    lambda: fb.tensor([[1., 2.], [3., 4.]]),
    lambda: fb.arange(6).reshape(2, 3).t(),
    lambda: fb.tensor([1.5], dtype=fb.bfloat16),
    lambda: fb.tensor([True, False]),
    lambda: fb.tensor(3 + 4j),
])
def test_pickle_roundtrip(make):
    t = make()
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is t.dtype and u.shape == t.shape and u.device == t.device
    np.testing.assert_array_equal(u.numpy().astype(np.complex128), t.numpy().astype(np.complex128))


def test_deepcopy_is_independent():
    t = fb.tensor([1., 2.])
    u = copy.deepcopy(t)
    u[0] = 5
    assert t.tolist() == [1., 2.] and u.tolist() == [5., 2.]
    base = fb.arange(4)
    copies = copy.deepcopy([base, base[1:3]])
    copies[0][1] = 100
    assert base.tolist() == [0, 1, 2, 3]

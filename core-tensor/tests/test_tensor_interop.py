"""Conversions (``to``, ``type``, casts) and host interop (numpy, DLPack, Python scalars)."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb


def test_to_dtype_device_and_copy():
    x = fb.tensor([1.5, -2.5])
    assert x.to(fb.int32).tolist() == [1, -2] and x.to(fb.int32).dtype is fb.int32
    assert x.to("cpu") is x and x.to(fb.float32) is x and x.cpu() is x
    copied = x.to(fb.float32, copy=True)
    assert copied is not x and copied.data_ptr() != x.data_ptr() and copied.tolist() == x.tolist()
    assert x.to("cpu", fb.float64).dtype is fb.float64
    assert x.to(device="cpu", dtype=fb.float16).dtype is fb.float16
    assert x.to(fb.tensor([1])).dtype is fb.int64
    assert x.to(fb.device("cpu")) is x
    assert fb.tensor([1 + 2j]).to(fb.float32).tolist() == [1.0]  # the imaginary part is dropped
    with pytest.raises(TypeError, match="to\\(\\) received an invalid combination of arguments"):
        x.to([1])


def test_to_missing_device_names_the_distribution():
    with pytest.raises(RuntimeError, match="flambeau-backend-cuda"):
        fb.tensor([1.5]).to("cuda:0")


@pytest.mark.parametrize("method, dtype, type_string", [
    ("float", fb.float32, "flambeau.FloatTensor"), ("double", fb.float64, "flambeau.DoubleTensor"),
    ("half", fb.float16, "flambeau.HalfTensor"), ("bfloat16", fb.bfloat16, "flambeau.BFloat16Tensor"),
    ("long", fb.int64, "flambeau.LongTensor"), ("int", fb.int32, "flambeau.IntTensor"),
    ("short", fb.int16, "flambeau.ShortTensor"), ("char", fb.int8, "flambeau.CharTensor"),
    ("byte", fb.uint8, "flambeau.ByteTensor"), ("bool", fb.bool, "flambeau.BoolTensor"),
    ("cfloat", fb.complex64, "flambeau.ComplexFloatTensor"),
    ("cdouble", fb.complex128, "flambeau.ComplexDoubleTensor"),
])
def test_cast_methods_and_type_strings(method, dtype, type_string):
    x = fb.tensor([1.5, 0.])
    y = getattr(x, method)()
    assert y.dtype is dtype and y.type() == type_string
    expected = np.array([1.5, 0.]).astype(dtype.numpy_dtype if dtype is not fb.bfloat16 else np.float32)
    np.testing.assert_array_equal(np.asarray(y.tolist()), expected)


def test_type_with_argument():
    x = fb.tensor([1.5])
    assert x.type(fb.int64).tolist() == [1]
    assert x.type("flambeau.DoubleTensor").dtype is fb.float64
    assert x.type_as(fb.tensor([1])).dtype is fb.int64
    with pytest.raises(ValueError, match="invalid type: 'flambeau.NopeTensor'"):
        x.type("flambeau.NopeTensor")


def test_numpy_shares_memory():
    x = fb.tensor([1., 2.])
    a = x.numpy()
    a[0] = 9
    assert x.tolist() == [9., 2.] and isinstance(a, np.ndarray) and a.dtype == np.float32
    assert a.flags.writeable
    assert x.data_ptr() == a.__array_interface__["data"][0]


def test_array_protocol():
    x = fb.tensor([1., 2.])
    np.testing.assert_array_equal(np.asarray(x), [1., 2.])
    assert np.asarray(x, dtype=np.int32).dtype == np.int32
    assert np.array(x).dtype == np.float32
    np.asarray(x)[0] = 7  # asarray does not copy
    assert x[0].item() == 7
    copied = np.array(x, copy=True)
    copied[1] = -1
    assert x[1].item() == 2


def test_numpy_scalars_defer_to_tensor():
    assert isinstance(np.float64(2.0) * fb.tensor([1., 2.]), fb.Tensor)
    assert (fb.tensor([1., 2.]) * np.float64(2.0)).tolist() == [2., 4.]


def test_tolist_and_item():
    assert fb.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert fb.tensor(2.5).tolist() == 2.5 and fb.tensor([True]).tolist() == [True]
    assert fb.tensor([1 + 1j]).tolist() == [1 + 1j] and fb.tensor([], dtype=fb.int64).tolist() == []
    assert fb.tensor([1.5], dtype=fb.float16).tolist() == [1.5]
    assert fb.tensor(2.5).item() == 2.5 and fb.tensor([3]).item() == 3 and fb.tensor([[True]]).item() is True
    assert type(fb.tensor(3).item()) is int and type(fb.tensor(3.).item()) is float
    assert type(fb.tensor(True).item()) is bool
    assert fb.tensor(1.1, dtype=fb.bfloat16).item() == 1.1015625
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        fb.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted to Scalar"):
        fb.tensor([]).item()


def test_python_scalar_conversions():
    assert float(fb.tensor([2.5])) == 2.5 and int(fb.tensor(3.7)) == 3 and int(fb.tensor([-3.7])) == -3
    assert complex(fb.tensor(1.)) == 1 + 0j and bool(fb.tensor([0])) is False
    assert f"{fb.tensor(2.5):.2f}" == "2.50"
    assert [1, 2, 3][fb.tensor(1)] == 2 and list(range(5))[fb.tensor([2])] == 2
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        float(fb.tensor([1., 2.]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(fb.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(fb.tensor([]))
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        [1, 2][fb.tensor(1.)]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(fb.tensor(1.))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(fb.tensor(1.))
    assert len(fb.zeros(3, 2)) == 3 and [r.tolist() for r in fb.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]


def test_dlpack_both_ways():
    x = fb.arange(6.).view(2, 3)
    a = np.from_dlpack(x)
    a[0, 0] = -1
    assert x[0, 0].item() == -1 and a.shape == (2, 3) and a.dtype == np.float32
    b = np.arange(6.).reshape(2, 3)
    t = fb.from_dlpack(b)
    t[1, 1] = 100
    assert b[1, 1] == 100 and t.dtype is fb.float64 and t.shape == (2, 3)
    strided = fb.from_dlpack(np.arange(6, dtype=np.int32)[::2])
    assert strided.stride() == (2,) and strided.tolist() == [0, 2, 4] and strided.dtype is fb.int32
    assert x.__dlpack_device__() == (1, 0)
    roundtrip = fb.from_dlpack(fb.tensor([1, 2]))
    assert roundtrip.tolist() == [1, 2]


def test_predicates_and_device():
    assert fb.zeros(2).is_floating_point() and not fb.zeros(2, dtype=fb.int32).is_floating_point()
    assert fb.zeros(2, dtype=fb.complex64).is_complex()
    assert fb.is_tensor(fb.zeros(1)) and not fb.is_tensor([1])
    assert fb.numel(fb.zeros(2, 3)) == 6 and fb.is_floating_point(fb.zeros(1))
    x = fb.zeros(2)
    assert x.device == fb.device("cpu") and x.device != "cpu" and x.is_cpu and not x.is_cuda
    assert x.get_device() == -1 and str(x.device) == "cpu"
    assert repr(fb.device("cuda", 1)) == "device(type='cuda', index=1)" and fb.device("cuda:2").index == 2
    with pytest.raises(RuntimeError, match="Invalid device string: 'cpu:x'"):
        fb.device("cpu:x")
    assert hash(x) == hash(x)


def test_contains():
    t = fb.tensor([[1, 2], [3, 4]])
    assert 3 in t and 5 not in t and fb.tensor([1, 2]) in t and 2.0 in t
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                                           "a <class 'str'>."):
        _ = "a" in t


def test_casts_follow_pytorch_conversions():
    assert fb.tensor([300]).to(fb.uint8).tolist() == [44] and fb.tensor([300]).to(fb.int8).tolist() == [44]
    assert fb.tensor([float("nan"), 1.]).to(fb.bool).tolist() == [True, True]
    assert fb.tensor([0.0, -0.0, 0.1]).bool().tolist() == [False, False, True]
    assert fb.tensor([0j, 1j]).bool().tolist() == [False, True]  # nonzero, not the real part
    target = fb.zeros(2, dtype=fb.bool)
    target.copy_(fb.tensor([0j, 1j]))
    assert target.tolist() == [False, True]
    assert fb.tensor([[1, 2]]).t().to(fb.float32).stride() == (1, 1)


def test_type_string_with_a_device():
    with pytest.raises(RuntimeError, match="flambeau-backend-cuda"):
        fb.tensor([1.5]).type("flambeau.cuda.FloatTensor")
    assert fb.tensor([1.5]).type("flambeau.DoubleTensor").dtype is fb.float64
    with pytest.raises(ValueError, match="invalid type: 'numpy.FloatTensor'"):
        fb.tensor([1.5]).type("numpy.FloatTensor")


def test_numpy_ufuncs_return_tensors():
    t = fb.tensor([1., 2.])
    result = np.sin(t)
    assert isinstance(result, fb.Tensor) and result.dtype is fb.float32
    np.testing.assert_allclose(result.numpy(), np.sin([1., 2.]).astype(np.float32))
    mask = np.greater(t, 1)
    assert mask.dtype is fb.uint8 and mask.tolist() == [0, 1]  # PyTorch's legacy: bool comes back as uint8
    assert np.exp(fb.tensor(1.)).shape == ()


def test_device_and_size_edge_cases():
    assert fb.device("cpu", 0).index == 0 and fb.device(fb.device("cpu")) is fb.device("cpu")
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        fb.device("cuda", -1)
    with pytest.raises(RuntimeError, match="^Device string must not be empty$"):
        fb.device("")
    size = fb.Size([2, 3])
    assert size == (2, 3) and isinstance(size[1:], fb.Size) and size + (4,) == (2, 3, 4)
    assert isinstance((1,) + size, fb.Size) and isinstance(size * 2, fb.Size) and size * 2 == (2, 3, 2, 3)
    assert fb.Size([]).numel() == 1 and fb.Size([0]).numel() == 0 and str(fb.Size([1])) == "flambeau.Size([1])"
    assert fb.Size([fb.tensor(2), np.int64(3)]) == (2, 3)
    with pytest.raises(TypeError, match=r"flambeau.Size\(\) takes an iterable of 'int' \(item 0 is 'float'\)"):
        fb.Size([2.5])

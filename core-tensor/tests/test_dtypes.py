"""dtypes, PyTorch's type promotion, the default dtype, finfo and iinfo.

Expected values are PyTorch 2.x's, written out by hand.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import flambeau as fb

SHORT = {"b1": fb.bool, "u1": fb.uint8, "i1": fb.int8, "i2": fb.int16, "i4": fb.int32, "i8": fb.int64,
         "f2": fb.float16, "bf": fb.bfloat16, "f4": fb.float32, "f8": fb.float64, "c8": fb.complex64,
         "c16": fb.complex128}
ORDER = ["b1", "u1", "i1", "i2", "i4", "i8", "f2", "bf", "f4", "f8", "c8", "c16"]

# torch.promote_types(row, column) for every pair.
PROMOTE_TABLE = {
    #      b1   u1   i1   i2   i4   i8   f2   bf   f4   f8   c8  c16
    "b1": "  b1   u1   i1   i2   i4   i8   f2   bf   f4   f8   c8  c16",
    "u1": "  u1   u1   i2   i2   i4   i8   f2   bf   f4   f8   c8  c16",
    "i1": "  i1   i2   i1   i2   i4   i8   f2   bf   f4   f8   c8  c16",
    "i2": "  i2   i2   i2   i2   i4   i8   f2   bf   f4   f8   c8  c16",
    "i4": "  i4   i4   i4   i4   i4   i8   f2   bf   f4   f8   c8  c16",
    "i8": "  i8   i8   i8   i8   i8   i8   f2   bf   f4   f8   c8  c16",
    "f2": "  f2   f2   f2   f2   f2   f2   f2   f4   f4   f8   c8  c16",
    "bf": "  bf   bf   bf   bf   bf   bf   f4   bf   f4   f8   c8  c16",
    "f4": "  f4   f4   f4   f4   f4   f4   f4   f4   f4   f8   c8  c16",
    "f8": "  f8   f8   f8   f8   f8   f8   f8   f8   f8   f8  c16  c16",
    "c8": "  c8   c8   c8   c8   c8   c8   c8   c8   c8  c16   c8  c16",
    "c16": " c16  c16  c16  c16  c16  c16  c16  c16  c16  c16  c16  c16",
}


@pytest.mark.parametrize("row", ORDER)
def test_promote_types_table(row):
    expected = PROMOTE_TABLE[row].split()
    for column, want in zip(ORDER, expected):
        got = fb.promote_types(SHORT[row], SHORT[column])
        assert got is SHORT[want], (row, column, got)


def test_promote_types_is_symmetric():
    for a in SHORT.values():
        for b in SHORT.values():
            assert fb.promote_types(a, b) is fb.promote_types(b, a)


def t(values, dtype):
    return fb.tensor(values, dtype=dtype)


@pytest.mark.parametrize("a, b, expected", [
    (lambda: t([1, 2], fb.int32), 2.5, fb.float32),  # a float scalar lifts an int tensor to the default float
    (lambda: t([1], fb.uint8), lambda: t([1], fb.int8), fb.int16),
    (lambda: t([1.], fb.float16), lambda: t(1., fb.float64), fb.float16),  # a 0-dim tensor does not widen
    (lambda: t([True], fb.bool), 1, fb.int64),
    (lambda: t([1, 2], fb.int32), lambda: t(5, fb.int64), fb.int32),
    (lambda: t(5, fb.int8), lambda: t(5, fb.int64), fb.int64),  # two 0-dim tensors promote normally
    (lambda: t([1.], fb.float32), 1j, fb.complex64),
    (lambda: t([1], fb.uint8), -1, fb.uint8),
    (lambda: t([1.], fb.float64), lambda: t(1j, fb.complex64), fb.complex128),
    (lambda: t([1], fb.int32), lambda: t(1., fb.float64), fb.float64),  # a 0-dim tensor of a higher category counts
    (lambda: t([1.], fb.bfloat16), lambda: t(1j, fb.complex128), fb.complex64),
    (2, 3.0, fb.float32),
    (lambda: t(1, fb.int16), 2.5, fb.float32),
    (True, lambda: t([1], fb.uint8), fb.uint8),
    (lambda: t([1.], fb.float16), 100000, fb.float16),
    (lambda: t([1], fb.int8), True, fb.int8),
])
def test_result_type(a, b, expected):
    a = a() if callable(a) else a
    b = b() if callable(b) else b
    assert fb.result_type(a, b) is expected


@pytest.mark.parametrize("make, dtype", [
    (lambda: fb.tensor([1, 2]) / fb.tensor([2, 3]), fb.float32),
    (lambda: fb.tensor([1, 2], dtype=fb.int32) + 2.5, fb.float32),
    (lambda: fb.tensor([1], dtype=fb.uint8) + fb.tensor([1], dtype=fb.int8), fb.int16),
    (lambda: fb.tensor([True]) + 1, fb.int64),
    (lambda: fb.tensor([True]) + True, fb.bool),
    (lambda: fb.tensor([1.], dtype=fb.float16) + fb.tensor(1., dtype=fb.float64), fb.float16),
    (lambda: fb.tensor([1, 2], dtype=fb.int8) * fb.tensor(1000), fb.int8),
    (lambda: fb.tensor([1], dtype=fb.int8) + fb.tensor(1.5, dtype=fb.float64), fb.float64),
    (lambda: fb.tensor(2) * 1.5, fb.float32),
    (lambda: fb.tensor([1, 2]) ** 2, fb.int64),
    (lambda: fb.tensor([2]) ** 0.5, fb.float32),
])
def test_operator_result_dtypes(make, dtype):
    assert make().dtype is dtype


def test_default_dtype_roundtrip():
    assert fb.get_default_dtype() is fb.float32
    fb.set_default_dtype(fb.float64)
    try:
        assert fb.get_default_dtype() is fb.float64
        assert fb.tensor([1.5]).dtype is fb.float64
        assert fb.tensor([1j]).dtype is fb.complex128
        assert fb.arange(1.).dtype is fb.float64
        assert fb.zeros(2).dtype is fb.float64
        assert (fb.tensor([1, 2]) / 2).dtype is fb.float64
    finally:
        fb.set_default_dtype(fb.float32)
    assert fb.tensor([1.5]).dtype is fb.float32
    assert fb.tensor([1j]).dtype is fb.complex64


@pytest.mark.parametrize("bad", [fb.int32, fb.bool, fb.complex64, "float32"])
def test_set_default_dtype_refuses_non_float(bad):
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        fb.set_default_dtype(bad)
    assert fb.get_default_dtype() is fb.float32


def test_dtype_attributes_and_aliases():
    assert fb.float32.is_floating_point and not fb.int64.is_floating_point
    assert fb.complex64.is_complex and not fb.float64.is_complex
    assert fb.int32.is_signed and not fb.uint8.is_signed and not fb.bool.is_signed and fb.float64.is_signed
    assert [d.itemsize for d in (fb.bool, fb.float16, fb.bfloat16, fb.complex128)] == [1, 2, 2, 16]
    assert (fb.float, fb.double, fb.half, fb.long, fb.int, fb.short, fb.cfloat, fb.cdouble) == (
        fb.float32, fb.float64, fb.float16, fb.int64, fb.int32, fb.int16, fb.complex64, fb.complex128)
    assert repr(fb.float32) == str(fb.float32) == "flambeau.float32"
    assert pickle.loads(pickle.dumps(fb.bfloat16)) is fb.bfloat16
    assert fb.float32.to_complex() is fb.complex64 and fb.complex128.to_real() is fb.float64


def test_can_cast():
    assert not fb.can_cast(fb.float32, fb.int32)
    assert fb.can_cast(fb.int32, fb.float32)
    assert fb.can_cast(fb.int32, fb.int8)  # same category: allowed, like PyTorch
    assert fb.can_cast(fb.bool, fb.uint8)
    assert not fb.can_cast(fb.complex64, fb.float64)
    assert not fb.can_cast(fb.float32, fb.bool)


def test_finfo_values_and_repr():
    f32 = fb.finfo(fb.float32)
    assert (f32.bits, f32.eps, f32.max, f32.min, f32.resolution, f32.dtype) == (
        32, float(np.finfo(np.float32).eps), float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max),
        1e-06, "float32")
    assert repr(f32) == ("finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
                         "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")
    assert repr(fb.finfo(fb.float16)) == ("finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
                                          "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)")
    assert repr(fb.finfo(fb.bfloat16)) == ("finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, "
                                           "eps=0.0078125, smallest_normal=1.17549e-38, tiny=1.17549e-38, "
                                           "dtype=bfloat16)")
    assert fb.finfo().dtype == "float32"
    assert fb.finfo(fb.complex128).dtype == "float64"
    assert fb.finfo(fb.float64).tiny == 2.2250738585072014e-308


def test_iinfo_values_and_repr():
    assert repr(fb.iinfo(fb.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    assert repr(fb.iinfo(fb.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    assert (fb.iinfo(fb.int64).max, fb.iinfo(fb.int8).min, fb.iinfo(fb.int16).bits) == (2 ** 63 - 1, -128, 16)


def test_info_errors():
    with pytest.raises(TypeError, match=r"flambeau.bool is not supported by flambeau.iinfo"):
        fb.iinfo(fb.bool)
    with pytest.raises(TypeError, match=r"iinfo\(\) requires an integer input type"):
        fb.iinfo(fb.float32)
    with pytest.raises(TypeError, match=r"finfo\(\) requires a floating point input type"):
        fb.finfo(fb.int32)


def test_bfloat16_through_ml_dtypes():
    x = fb.tensor([1.5, 2.0, 1 / 3], dtype=fb.bfloat16)
    assert x.dtype is fb.bfloat16 and x.element_size() == 2
    assert x.numpy().dtype.name == "bfloat16"
    assert x.tolist() == [1.5, 2.0, 0.333984375]  # 1/3 rounded to bfloat16's 8 bits of mantissa
    assert fb.tensor(2.5, dtype=fb.bfloat16).item() == 2.5
    assert (x * 2).dtype is fb.bfloat16
    assert (x + fb.tensor([1.], dtype=fb.float16)).dtype is fb.float32
    assert fb.tensor([1, 2]).to(fb.bfloat16).tolist() == [1.0, 2.0]

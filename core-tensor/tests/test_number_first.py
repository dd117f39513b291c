"""A Python number as the first argument of the arithmetic, power and bitwise functions, as PyTorch
accepts it (``torch.pow(2, t)``, ``torch.sub(1, t)``): it takes its weak dtype against the tensor."""
from __future__ import annotations

import math

import pytest

import flambeau as fb


@pytest.mark.parametrize("name, number, values, dtype, want", [
    ("add", 2, [1.0, 2.0], fb.float32, [3.0, 4.0]),
    ("sub", 2, [1.0, 2.0], fb.float32, [1.0, 0.0]),
    ("mul", 2.5, [1, 2], fb.int64, [2.5, 5.0]),
    ("div", 3, [2, 4], fb.int64, [1.5, 0.75]),
    ("floor_divide", 7, [2, 4], fb.int64, [3, 1]),
    ("remainder", 7, [3, -4], fb.int64, [1, -1]),
    ("pow", 2, [1, 3], fb.int64, [2, 8]),
    ("pow", 2.0, [0.5, 2.0], fb.float64, [math.sqrt(2.0), 4.0]),
    ("bitwise_and", 6, [3, 12], fb.int64, [2, 4]),
    ("bitwise_or", 6, [3, 12], fb.int64, [7, 14]),
    ("bitwise_xor", 6, [3, 12], fb.int64, [5, 10]),
    ("bitwise_left_shift", 1, [2, 5], fb.int64, [4, 32]),
    ("bitwise_right_shift", 64, [2, 5], fb.int64, [16, 2]),
])
def test_number_first_matches_the_maths(name, number, values, dtype, want):
    t = fb.tensor(values, dtype=dtype)
    got = getattr(fb, name)(number, t)
    assert got.tolist() == pytest.approx(want)


@pytest.mark.parametrize("number, dtype, want", [
    (2, fb.uint8, fb.uint8),  # an int against an integer tensor keeps the tensor's dtype
    (2.5, fb.uint8, fb.float32),  # a float against an integer tensor: the default float dtype
    (2.5, fb.float16, fb.float16),  # same category: the tensor's dtype
    (2.5, fb.float64, fb.float64),
    (True, fb.int8, fb.int8),
    (1j, fb.float32, fb.complex64),
    (1j, fb.float64, fb.complex128),
    (3, fb.bool, fb.int64),
])
def test_number_first_takes_the_scalars_weak_dtype(number, dtype, want):
    t = fb.ones(2, dtype=dtype)
    assert fb.mul(number, t).dtype == want
    assert fb.add(number, t).dtype == want


def test_number_first_wraps_ints_like_integer_arithmetic():
    u = fb.tensor([1, 2], dtype=fb.uint8)
    assert fb.add(300, u).tolist() == [(300 + 1) % 256, (300 + 2) % 256]
    assert fb.floor_divide(-1, u).tolist() == [255 // 1, 255 // 2]  # -1 becomes 255 first, as in PyTorch
    assert fb.div(-1, u).tolist() == [-1.0, -0.5]  # true division uses the int itself
    assert (-1 / u).tolist() == [-1.0, -0.5]


def test_number_first_keeps_keyword_arguments_and_out():
    x = fb.tensor([1.0, 2.0])
    assert fb.add(2, x, alpha=3).tolist() == [5.0, 8.0]
    assert fb.sub(2, x, alpha=0.5).tolist() == [1.5, 1.0]
    assert fb.div(7, fb.tensor([2, -2]), rounding_mode="floor").tolist() == [3, -4]
    out = fb.empty(2)
    assert fb.sub(1, x, out=out) is out
    assert out.tolist() == [0.0, -1.0]


def test_a_bool_number_stays_bool():
    t = fb.tensor([1, 2])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        fb.sub(True, t)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        True - t
    assert (True + t).tolist() == [2, 3]
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'Bool'"):
        fb.pow(True, fb.tensor([True, False]))


@pytest.mark.parametrize("call", [
    lambda: fb.pow(2.0, 3.0),  # no tensor at all
    lambda: fb.add("a", fb.ones(1)),  # not a number
    lambda: fb.maximum(2, fb.ones(1)),  # PyTorch has no number-first form of maximum
    lambda: fb.atan2(1.0, fb.ones(1)),
])
def test_what_pytorch_refuses_is_refused(call):
    with pytest.raises(TypeError, match="must be Tensor"):
        call()


@pytest.mark.parametrize("name, kernel, dtype, type_name", [
    ("floor_divide", "div_floor", fb.bool, "Bool"),
    ("floor_divide", "div_floor", fb.complex64, "ComplexFloat"),
    ("remainder", "remainder", fb.bool, "Bool"),
    ("remainder", "remainder", fb.complex128, "ComplexDouble"),
    ("fmod", "fmod", fb.bool, "Bool"),
    ("bitwise_left_shift", "lshift", fb.bool, "Bool"),
    ("bitwise_right_shift", "rshift", fb.bool, "Bool"),
])
def test_dtypes_without_a_kernel_in_pytorch(name, kernel, dtype, type_name):
    t = fb.ones(2, dtype=dtype)
    with pytest.raises(NotImplementedError, match=f"\"{kernel}_cpu\" not implemented for '{type_name}'"):
        getattr(fb, name)(t, t)

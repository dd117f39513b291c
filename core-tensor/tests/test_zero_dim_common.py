"""A 0-d tensor operand meets a tensor with dims in PyTorch's common dtype (``OpDecl.zero_dim_common``).

PyTorch casts a 0-d tensor whose dtype category (bool < integer < floating < complex) is no higher
than the other operand's to that operand's dtype before comparing, taking max/min, clamping or
dividing with rounding; numpy would compute in the 0-d operand's wider dtype. Each expected value
below is worked out from that rule (and was checked against PyTorch 2.13).
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb


def _u8(*values):
    return fb.tensor(list(values), dtype=fb.uint8)


def test_integer_comparisons_use_the_wrapped_value():
    a = _u8(1, 2, 255)
    assert (a == fb.tensor(257)).tolist() == [True, False, False]  # 257 -> 1
    assert (a < fb.tensor(256)).tolist() == [False, False, False]  # 256 -> 0
    assert fb.eq(fb.tensor(257), a).tolist() == [True, False, False]  # the 0-d operand first
    assert fb.logical_and(a, fb.tensor(256)).tolist() == [False, False, False]


def test_max_min_and_clamp_use_the_wrapped_value():
    a = _u8(1, 2, 255)
    assert fb.maximum(a, fb.tensor(-1)).tolist() == [255, 255, 255]  # -1 -> 255
    assert fb.minimum(a, fb.tensor(258)).tolist() == [1, 2, 2]  # 258 -> 2
    assert fb.fmax(a, fb.tensor(-1)).tolist() == [255, 255, 255]
    assert fb.clamp(a, min=fb.tensor(-1)).tolist() == [255, 255, 255]
    assert fb.clamp(a, max=fb.tensor(257)).tolist() == [1, 1, 1]
    b = _u8(1, 2, 255)
    b.clamp_(min=fb.tensor(-1))
    assert b.tolist() == [255, 255, 255] and b.dtype is fb.uint8


def test_divisions_with_rounding_and_powers_use_the_wrapped_value():
    two = _u8(2)
    assert (two // fb.tensor(257)).tolist() == [2]  # divides by 1
    assert fb.remainder(_u8(7), fb.tensor(260)).tolist() == [3]  # 260 -> 4
    assert fb.fmod(_u8(2), fb.tensor(257)).tolist() == [0]
    assert (two ** fb.tensor(257)).tolist() == [2]  # the exponent is 1
    # true division of integers computes in floating point from the values as given: 2 / 257
    assert (two / fb.tensor(257)).tolist() == pytest.approx([2 / 257])
    # ... but a rounding division casts first, in every form
    for mode in ("floor", "trunc"):
        assert fb.div(two, fb.tensor(257), rounding_mode=mode).tolist() == [2]
        out = fb.empty(1, dtype=fb.uint8)
        fb.div(two, fb.tensor(257), rounding_mode=mode, out=out)
        assert out.tolist() == [2]
        inplace = _u8(2)
        inplace.div_(fb.tensor(257), rounding_mode=mode)
        assert inplace.tolist() == [2]
    assert fb.div(two, fb.tensor(258), rounding_mode="floor").tolist() == [1]  # 258 -> 2


def test_floats_are_rounded_to_the_tensors_precision_first():
    f = fb.tensor([1.0000001, 16777217.0], dtype=fb.float32)
    assert (f == fb.tensor(1.0000001, dtype=fb.float64)).tolist() == [True, False]
    assert (fb.tensor([1.5], dtype=fb.float16) == fb.tensor(1.5001, dtype=fb.float64)).tolist() == [True]


def test_higher_category_and_equal_ranks_are_left_alone():
    # a floating 0-d operand against integers: compared in float64, 3 != 3.0000001
    assert (fb.tensor([3], dtype=fb.int32) == fb.tensor(3.0000001, dtype=fb.float64)).tolist() == [False]
    # bool against an int 0-d: promoted to int64, so 2 stays 2
    assert (fb.tensor([True, False]) == fb.tensor(2)).tolist() == [False, False]
    # bool 0-d against int8: True -> 1
    assert (fb.tensor([1, 2], dtype=fb.int8) == fb.tensor(True)).tolist() == [True, False]
    # both 0-d: ordinary promotion, 257 stays 257
    assert (fb.tensor(257) == fb.tensor(1, dtype=fb.uint8)).item() is False
    # both with dims: ordinary promotion
    assert (_u8(1) == fb.tensor([257])).tolist() == [False]


def test_out_argument_through_the_cast():
    out = fb.empty(3, dtype=fb.bool)
    fb.eq(_u8(1, 2, 255), fb.tensor(257), out=out)
    assert out.tolist() == [True, False, False]
    # The result's dtype; its gradient through the cast is core-autograd's
    # (core-autograd/tests/test_formulas_pointwise.py::test_maximum_gradient_through_the_zero_dim_cast).
    z = fb.maximum(fb.tensor([1.0, 5.0]), fb.tensor(3.0, dtype=fb.float64))
    assert z.dtype is fb.float32 and z.tolist() == [3.0, 5.0]


def test_same_dtypes_take_no_detour():
    a = fb.tensor(np.arange(4, dtype=np.int64))
    assert fb.eq._source.count("_zero_dim_common") == 1
    assert (a == fb.tensor(2)).tolist() == [False, False, True, False]

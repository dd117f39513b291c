"""Python-int operands past PyTorch's argument parser, 0-d fill values and dims of 0-d tensors.

PyTorch parses a Python int operand into int64 (or uint64 above it) for every dtype, so an int
outside ``[-2**63, 2**64)`` raises OverflowError even where the tensor is floating point (it never
becomes ``inf``); a 0-d tensor given as a fill value is read and range-checked like a number; and
ops that need a real dimension refuse 0 and -1 on a 0-d tensor.
"""
from __future__ import annotations

import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb

TOO_BIG = st.integers(min_value=1 << 64, max_value=1 << 200)
TOO_SMALL = st.integers(min_value=-(1 << 200), max_value=-(1 << 63) - 1)

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
          lambda t, v: v + t, lambda t, v: v * t, lambda t, v: v - t, fb.add, fb.mul, fb.sub, fb.fmod,
          fb.remainder, lambda t, v: t.add_(v), lambda t, v: fb.where(fb.ones(t.shape, dtype=fb.bool), t, v)]


@pytest.mark.parametrize("dtype", [fb.float16, fb.bfloat16, fb.float32, fb.float64, fb.complex64])
@pytest.mark.parametrize("op", BINARY)
@settings(max_examples=8, deadline=None)
@given(value=st.one_of(TOO_BIG, TOO_SMALL))
def test_an_int_past_the_parser_range_raises_for_every_dtype(op, dtype, value):
    if dtype.is_complex and op in (operator.floordiv, operator.mod, operator.lt, operator.le, operator.gt,
                                   operator.ge, fb.fmod, fb.remainder):
        return  # not defined for complex at all
    t = fb.tensor([1.0, 2.0], dtype=dtype)
    before = t.clone()
    with pytest.raises(OverflowError, match="int too big to convert|can't convert negative int to unsigned"):
        op(t, value)
    assert fb.equal(t, before)  # nothing written by an in-place form


@pytest.mark.parametrize("value", [(1 << 64) - 1, 1 << 63, (1 << 63) - 1, -(1 << 63)])
def test_ints_at_the_parser_bounds_are_taken(value):
    t = fb.tensor([1.0], dtype=fb.float64)
    assert (t + value).item() == pytest.approx(1.0 + value)
    assert (t * value).item() == pytest.approx(float(value))
    assert (t == value).item() is False


@pytest.mark.parametrize("dtype, value, name", [
    (fb.uint8, 300, "uint8_t"), (fb.uint8, -300, "uint8_t"), (fb.int8, -129, "int8_t"), (fb.int8, 128, "int8_t"),
    (fb.float16, 1e6, "c10::Half"),
])
def test_a_0d_fill_value_is_range_checked_like_a_number(dtype, value, name):
    t = fb.tensor([1, 2], dtype=dtype)
    before = t.clone()
    mask = fb.tensor([True, False])
    message = f"value cannot be converted to type {name} without overflow"
    with pytest.raises(RuntimeError, match=message):
        t.masked_fill_(mask, fb.tensor(value))
    with pytest.raises(RuntimeError, match=message):
        t.index_fill_(0, fb.tensor([0]), fb.tensor(value))
    with pytest.raises(RuntimeError, match=message):
        t.masked_fill(mask, fb.tensor(value))
    assert fb.equal(t, before)
    assert t.masked_fill(mask, fb.tensor(7)).tolist() == [7, 2]


@pytest.mark.parametrize("call", [
    lambda x, d: x.roll(1, d), lambda x, d: fb.unique(x, dim=d), lambda x, d: fb.unique_consecutive(x, dim=d),
    lambda x, d: fb.take_along_dim(x, fb.zeros(x.shape, dtype=fb.int64), dim=d),
])
@pytest.mark.parametrize("dim", [0, -1])
def test_ops_that_need_a_real_dimension_refuse_a_0d_tensor(call, dim):
    with pytest.raises(IndexError, match=f"Dimension specified as {dim} but tensor has no dimensions"):
        call(fb.tensor(1.0), dim)
    assert call(fb.tensor([1.0]), dim).shape == (1,)  # a 1-d tensor is fine

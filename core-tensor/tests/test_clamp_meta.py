"""clamp's meta function: the fast path for a floating tensor with float bounds gives the same
shapes, dtypes and errors as the general path, without computing a result type."""
from __future__ import annotations

import math

import pytest

import flambeau as fb
from flambeau._core_ops import elementwise


def _no_result_type(*args, **kwargs):
    raise AssertionError("the general path ran")


@pytest.mark.parametrize("dtype", [fb.float16, fb.bfloat16, fb.float32, fb.float64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("bounds", [(0.25, 0.75), (None, 0.5), (0.5, None), (0.75, 0.25), (-math.inf, math.nan)])
def test_float_bounds_take_the_fast_path(monkeypatch, dtype, shape, bounds):
    x = fb.linspace(0, 1, math.prod(shape), dtype=dtype).reshape(shape)
    monkeypatch.setattr(elementwise, "result_type", _no_result_type)
    out = fb.clamp(x, *bounds)
    assert out.dtype is dtype and tuple(out.shape) == shape


@pytest.mark.parametrize("dtype, bound", [(fb.float16, 65520.0), (fb.bfloat16, 3.4e38), (fb.float32, 1e39)])
def test_bounds_past_a_narrow_float_type_are_refused_on_the_fast_path(dtype, bound):
    x = fb.ones(2, dtype=dtype)
    with pytest.raises(RuntimeError, match="without overflow"):
        fb.clamp(x, None, bound)
    with pytest.raises(RuntimeError, match="without overflow"):
        fb.clamp(x, -bound)
    assert fb.clamp(x, -math.inf, math.inf).tolist() == [1.0, 1.0]  # infinities always fit


def test_float64_takes_any_float_bound_and_other_cases_keep_the_general_path():
    assert fb.clamp(fb.ones(2, dtype=fb.float64), 1e300).tolist() == [1e300, 1e300]
    assert fb.clamp(fb.tensor([1, 5, 9]), 2.5, 7).dtype is fb.float32  # int tensor, float bound: promotes
    assert fb.clamp(fb.tensor([1.0, 5.0]), 2, 3).tolist() == [2.0, 3.0]  # int bounds
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        fb.clamp(fb.ones(2))

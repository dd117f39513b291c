"""Dtypes PyTorch has no kernel for are refused with its error; out-of-range float casts in
``flambeau.tensor`` saturate silently, as in PyTorch."""
from __future__ import annotations

import math
import warnings

import pytest

import flambeau as fb


def test_addcmul_and_arange_refuse_bool():
    b = fb.tensor([True, False])
    with pytest.raises(NotImplementedError, match="\"addcmul_cpu_out\" not implemented for 'Bool'"):
        fb.addcmul(b, b, b)
    with pytest.raises(NotImplementedError, match="\"arange_cpu\" not implemented for 'Bool'"):
        fb.arange(3, dtype=fb.bool)


def test_tensor_casts_out_of_range_floats_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = fb.tensor([1e38, -1e38, 1.0], dtype=fb.float16)
    values = t.tolist()
    assert math.isinf(values[0]) and values[0] > 0
    assert math.isinf(values[1]) and values[1] < 0
    assert values[2] == 1.0

"""The CPU kernels' small-tensor paths (numpy's ufunc called straight, default casting first) give
the numpy kernels' results, and the numpy kernels stay silent about floating-point exceptions
(PyTorch returns inf/nan without a warning)."""
from __future__ import annotations

import warnings

import flambeau as fb
import numpy as np
import pytest


def test_wider_zero_dim_operand_keeps_the_tensor_dtype():
    # uint8 tensor with an int32 0-d tensor: PyTorch's result is uint8 (wrapping), which numpy's
    # default casting refuses; the kernel retries with unsafe casting.
    a = fb.tensor([250, 3], dtype=fb.uint8)
    z = fb.tensor(10, dtype=fb.int32)
    for op, want in ((lambda x, y: x + y, [4, 13]), (lambda x, y: x - y, [240, 249]),
                     (lambda x, y: x * y, [196, 30])):
        r = op(a, z)
        assert r.dtype is fb.uint8
        assert r.tolist() == want
    assert (a < z).tolist() == [False, True]
    assert (fb.tensor([1, 2], dtype=fb.int8) == fb.tensor(2, dtype=fb.int64)).tolist() == [False, True]


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.int64, fb.uint8, fb.bool])
def test_small_binary_ops_match_numpy(dtype):
    x = np.array([0, 1, 3, 1], dtype=dtype.numpy_dtype)
    y = np.array([1, 1, 2, 0], dtype=dtype.numpy_dtype)
    a, b = fb.from_numpy(x), fb.from_numpy(y)
    assert np.array_equal((a + b).numpy(), x + y)
    assert np.array_equal((a * b).numpy(), x * y)
    assert np.array_equal((a <= b).numpy(), x <= y)
    assert np.array_equal(fb.maximum(a, b).numpy(), np.maximum(x, y))
    if dtype is not fb.bool:
        assert np.array_equal((a - b).numpy(), x - y)
        assert np.array_equal(fb.add(a, b, alpha=2).numpy(), x + 2 * y)


def test_in_place_small_add_writes_into_input():
    a = fb.ones(3)
    a += fb.full((3,), 2.0)
    a.add_(1.0)
    assert a.tolist() == [4.0, 4.0, 4.0]


def test_numpy_kernels_say_nothing_about_floating_point_exceptions():
    x = fb.tensor([0.0, -1.0, float("inf"), float("nan"), 1e30])
    y = fb.tensor([0.0, 0.0, float("inf"), 1.0, 1e30])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = [fb.log(x), fb.sqrt(x), fb.exp(x), fb.asin(x), fb.atanh(x), x / y, x // y, fb.remainder(x, y),
                   fb.fmod(x, y), x ** y, fb.reciprocal(x), fb.rsqrt(x), fb.maximum(x, y), fb.minimum(x, y),
                   x.square(), fb.tensor([float("inf"), float("-inf")]).sum(), x.mean(), x.prod(), fb.frac(x),
                   fb.add(x, -y, alpha=2.0)]
    assert fb.log(x).tolist()[:2][0] == float("-inf")
    assert np.isnan(fb.sqrt(x).tolist()[1])
    assert len(results) == 20
    # the user's own numpy error mode is left as it was
    assert np.geterr()["divide"] == "warn"
    with pytest.warns(RuntimeWarning):
        np.log(np.zeros(1))

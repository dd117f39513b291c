"""gcd and lcm decomposed onto the core tier (Euclid on every element at once) against the CPU
kernels (numpy's gcd, PyTorch's lcm wrapping rules), at every integer dtype's extremes."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS


def _decomposed(name, *args):
    return _without_kernel(OPS[name], fb.device("cpu"), args, None, False)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.int64])
def test_matches_the_kernel_at_the_extremes(name, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    a = rng.integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
    a[:6] = [0, 0, info.min, info.max, 6, info.max]
    b[:6] = [0, 7, 0, info.max, 4, 1]
    x, y = fb.from_numpy(a), fb.from_numpy(b)
    got, want = _decomposed(name, x, y), fb.ops.function(name)(x, y)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_broadcasts_and_promotes():
    a = fb.tensor([[12], [18]], dtype=fb.int16)
    b = fb.tensor([8, 27, 0], dtype=fb.int64)
    for name in ("gcd", "lcm"):
        got, want = _decomposed(name, a, b), fb.ops.function(name)(a, b)
        assert got.dtype == fb.int64 and tuple(got.shape) == (2, 3)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(_decomposed("gcd", a, b).numpy(), [[4, 3, 12], [2, 9, 18]])


def test_refuses_floats_as_the_kernel():
    with pytest.raises(RuntimeError):
        fb.gcd(fb.tensor([1.0]), fb.tensor([2.0]))
    with pytest.raises(RuntimeError):
        _decomposed("gcd", fb.tensor([1.0]), fb.tensor([2.0]))

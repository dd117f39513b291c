"""The C++ Philox fills: exact agreement of the normal transform with numpy's math on the same words,
bounds, layout and thread-count independence, and refusal of outputs it cannot write."""
from __future__ import annotations

import numpy as np
import pytest

_C = pytest.importorskip("flambeau_cpu._C")


def _uniform(dtype, n, key=5, offset=11):
    out = np.empty(n, dtype)
    _C.philox_fill(out, key, offset, 0.0, 1.0, False)
    return out


def test_uniform_grid_and_bounds():
    u32 = _uniform(np.float32, 100_003)
    assert u32.min() >= 0 and u32.max() < 1
    np.testing.assert_array_equal(u32 * 2 ** 24, np.round(u32 * 2 ** 24))  # multiples of 2^-24
    u64 = _uniform(np.float64, 100_003)
    assert u64.min() >= 0 and u64.max() < 1 and abs(u64.mean() - 0.5) < 0.005


def test_uniform_range_is_affine():
    out = np.empty(1000, np.float64)
    _C.philox_fill(out, 5, 11, -3.0, 5.0, False)
    np.testing.assert_allclose(out, -3.0 + 8.0 * _uniform(np.float64, 1000), rtol=0, atol=1e-14)


def test_float64_normal_is_box_muller_of_the_same_words():
    n = 20_000
    u = _uniform(np.float64, n)  # pairs (u_a, u_b) per counter block, as the normal fill reads them
    z = np.empty(n)
    _C.philox_fill(z, 5, 11, 0.0, 1.0, True)
    r = np.sqrt(-2 * np.log1p(-u[0::2]))
    np.testing.assert_allclose(z[0::2], r * np.cos(2 * np.pi * u[1::2]), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(z[1::2], r * np.sin(2 * np.pi * u[1::2]), rtol=1e-13, atol=1e-13)


def test_float32_normal_is_box_muller_of_the_same_words():
    n = 40_000
    u = _uniform(np.float32, n).astype(np.float64)
    z = np.empty(n, np.float32)
    _C.philox_fill(z, 5, 11, 0.0, 1.0, True)
    for pair in (0, 2):
        r = np.sqrt(-2 * np.log(u[pair::4] + 2.0 ** -24))
        theta = 2 * np.pi * u[pair + 1::4]
        np.testing.assert_allclose(z[pair::4], r * np.cos(theta), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(z[pair + 1::4], r * np.sin(theta), rtol=2e-5, atol=2e-6)


def test_mean_and_std_scale():
    z = np.empty(50_000)
    _C.philox_fill(z, 1, 0, 3.0, 0.5, True)
    assert abs(z.mean() - 3.0) < 0.01 and abs(z.std() - 0.5) < 0.01


@pytest.mark.parametrize("normal", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_thread_count_and_prefix_independence(dtype, normal):
    before = _C.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            _C.set_num_threads(threads)
            out = np.empty(4_400_003, dtype)  # past the one-thread limit (2**20 counter blocks)
            _C.philox_fill(out, 9, 4, 0.0, 1.0, normal)
            outs.append(out)
        np.testing.assert_array_equal(outs[0], outs[1])
        short = np.empty(13, dtype)
        _C.philox_fill(short, 9, 4, 0.0, 1.0, normal)
        np.testing.assert_array_equal(short, outs[0][:13])  # element i depends only on (key, offset, i)
    finally:
        _C.set_num_threads(before)


def test_refuses_what_it_cannot_write():
    with pytest.raises(ValueError):
        _C.philox_fill(np.empty((4, 4), np.float32)[:, ::2], 1, 0, 0.0, 1.0, False)
    with pytest.raises(ValueError):
        _C.philox_fill(np.empty(4, np.float16), 1, 0, 0.0, 1.0, False)
    ro = np.empty(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        _C.philox_fill(ro, 1, 0, 0.0, 1.0, False)
    _C.philox_fill(np.empty(0, np.float32), 1, 0, 0.0, 1.0, True)  # empty: nothing to do

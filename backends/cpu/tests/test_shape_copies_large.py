"""The shape copies above the size where they switch to the threaded C++ copies (``kernels/shape.py``)
agree with numpy, on strided inputs, mixed dtypes and PyTorch's legacy empty inputs included."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb

BIG = (300, 257)  # 77100 elements: past the 32768-element switch, odd sizes so rows are not aligned


def _data(shape, dtype=np.float32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _t(a: np.ndarray) -> fb.Tensor:
    return fb.from_numpy(a)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_large_strided_and_mixed_dtypes(dim):
    a = _data(BIG)
    b = _data((BIG[1], BIG[0]), seed=1).T  # a transposed view
    want = np.concatenate([a, b, a], dim)
    np.testing.assert_array_equal(fb.cat([_t(a), _t(b), _t(a)], dim).numpy(), want)
    c = _data(BIG, np.float64, seed=2)  # promotion: float32 and float64 join as float64
    got = fb.cat([_t(a), _t(c)], dim)
    assert got.dtype == fb.float64
    np.testing.assert_array_equal(got.numpy(), np.concatenate([a.astype(np.float64), c], dim))


def test_cat_large_skips_legacy_empty_inputs():
    a = _data(BIG)
    got = fb.cat([fb.empty(0), _t(a), fb.empty(0), _t(a)], 1)
    np.testing.assert_array_equal(got.numpy(), np.concatenate([a, a], 1))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_large(dim):
    parts = [_data(BIG, seed=s) for s in range(3)]
    tall = _data((2 * BIG[0], BIG[1]), seed=3)
    tensors = [_t(p) for p in parts] + [_t(tall)[::2]]  # a strided view among them
    got = fb.stack(tensors, dim)
    np.testing.assert_array_equal(got.numpy(), np.stack(parts + [tall[::2]], dim))


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.complex128, np.bool_])
def test_flip_large(dims, dtype):
    a = _data(BIG).astype(dtype)
    np.testing.assert_array_equal(fb.flip(_t(a), dims).numpy(), np.flip(a, dims))
    np.testing.assert_array_equal(fb.flip(_t(a).T, dims).numpy(), np.flip(a.T, dims))


@pytest.mark.parametrize("shifts, dims", [(5, 1), (-7, 0), (300, 0), ((3, -4), (0, 1)), ((2, 5), (1, 1)),
                                          (12345, None)])
def test_roll_large(shifts, dims):
    a = _data(BIG)
    np.testing.assert_array_equal(fb.roll(_t(a), shifts, dims).numpy(), np.roll(a, shifts, dims))
    np.testing.assert_array_equal(fb.roll(_t(a).T, shifts, dims).numpy(), np.roll(a.T, shifts, dims))


@pytest.mark.parametrize("diagonal", [-300, -5, 0, 3, 400])
def test_tril_triu_large_and_in_place(diagonal):
    a = _data((2,) + BIG)
    np.testing.assert_array_equal(fb.tril(_t(a), diagonal).numpy(), np.tril(a, diagonal))
    np.testing.assert_array_equal(fb.triu(_t(a).transpose(1, 2), diagonal).numpy(),
                                  np.triu(a.transpose(0, 2, 1), diagonal))
    t = _t(a.copy())
    version = t._version_counter[0]
    t.tril_(diagonal)
    np.testing.assert_array_equal(t.numpy(), np.tril(a, diagonal))
    assert t._version_counter[0] == version + 1


def test_repeat_large():
    a = _data((30, 257))
    np.testing.assert_array_equal(_t(a).repeat(3, 1, 2).numpy(), np.tile(a, (3, 1, 2)))
    np.testing.assert_array_equal(_t(a).T.repeat(4, 3).numpy(), np.tile(a.T, (4, 3)))

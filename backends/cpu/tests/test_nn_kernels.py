"""The normalization and embedding kernels (flambeau_cpu.kernels.nn_normalization / nn_sparse) and
their C++ entry points, called directly on numpy arrays.

They serve ops that flambeau-nn declares; these tests need only the backend. The C++ functions
check every size, dtype and layout again, so a caller that gets one wrong gets an exception,
never a read or write out of bounds.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from flambeau_cpu import _C
from flambeau_cpu.kernels import nn_normalization as N, nn_sparse as S

pytestmark = pytest.mark.skipif(not (N.KERNELS and S.KERNELS), reason="extension built without the nn kernels")

RNG = np.random.default_rng(0)


def _layer_norm_ref(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + eps)
    return (x - mean) * rstd * w + b, mean, rstd


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000, 5000])
def test_layer_norm_kernel(dtype, n):
    x = (RNG.standard_normal((7, n)) * 3 + 50).astype(dtype)
    w, b = RNG.standard_normal(n).astype(dtype), RNG.standard_normal(n).astype(dtype)
    out = (np.empty_like(x), np.empty((7, 1), dtype), np.empty((7, 1), dtype))
    N.nn_layer_norm(x, (n,), w, b, 1e-5, out)
    ref = _layer_norm_ref(x.astype(np.float64), w, b, 1e-5)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_layer_norm_kernel_half_and_strided():
    x = RNG.standard_normal((6, 40)).astype(np.float16)
    out = (np.empty((40, 6), np.float16).T, np.empty((6, 1), np.float32), np.empty((6, 1), np.float32))
    N.nn_layer_norm(x, (40,), None, None, 1e-5, out)
    ref = _layer_norm_ref(x.astype(np.float64), 1.0, 0.0, 1e-5)[0]
    np.testing.assert_allclose(out[0].astype(np.float64), ref, atol=1e-2)


def test_native_norm_checks_sizes_and_layouts():
    x = np.ones((4, 8), np.float32)
    y, m, r = np.empty_like(x), np.empty(4, np.float32), np.empty(4, np.float32)
    with pytest.raises(ValueError, match="weight has 7 elements, expected 8"):
        _C.nn_layer_norm(x, np.ones(7, np.float32), None, 1e-5, y, m, r, 4, 8)
    with pytest.raises(ValueError, match="input has 32 elements, expected 40"):
        _C.nn_layer_norm(x, None, None, 1e-5, y, m, r, 5, 8)
    with pytest.raises(TypeError, match="mean has the wrong dtype"):
        _C.nn_layer_norm(x, None, None, 1e-5, y, np.empty(4), r, 4, 8)
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.nn_layer_norm(np.ones((8, 4), np.float32).T, None, None, 1e-5, y, m, r, 4, 8)
    with pytest.raises(ValueError, match="output has 3 elements, expected 32"):
        _C.nn_batch_norm(x, None, None, m, m, True, 1e-5, np.empty(3, np.float32), 8, 4, 1)
    with pytest.raises(ValueError, match="bad sizes"):
        _C.nn_batch_norm(x, None, None, m, m, True, 1e-5, y, -4, 8, -1)


def test_batch_norm_kernel_matches_reference():
    x = RNG.standard_normal((5, 3, 7)) * 2 + 1
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    out = (np.empty_like(x), np.empty(3), np.empty(3))
    N.nn_batch_norm(x, w, b, None, None, True, 1e-5, out)
    mean, var = x.mean((0, 2)), x.var((0, 2))
    np.testing.assert_allclose(out[1], mean, rtol=1e-12)
    np.testing.assert_allclose(out[2], var, rtol=1e-12)
    ref = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * w[:, None] + b[:, None]
    np.testing.assert_allclose(out[0], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int8, np.bool_])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding_gather_any_dtype(dtype, index_dtype):
    w = (RNG.standard_normal((9, 5)) * 10).astype(dtype)
    i = RNG.integers(0, 9, (3, 4)).astype(index_dtype)
    out = np.empty((3, 4, 5), dtype)
    S.nn_embedding(w, i, -1, False, out)
    np.testing.assert_array_equal(out, w[i])


def test_embedding_gather_rejects_bad_indices_and_outputs():
    w = np.ones((4, 2), np.float32)
    for bad in (4, -1, 2 ** 40):
        with pytest.raises(IndexError, match="index out of range in self"):
            _C.nn_embedding(w, np.array([0, bad]), np.empty((2, 2), np.float32))
    with pytest.raises(ValueError, match="out does not match"):
        _C.nn_embedding(w, np.array([0, 1]), np.empty((3, 2), np.float32))
    with pytest.raises(TypeError, match="int64 or int32"):
        _C.nn_embedding(w, np.array([0.0]), np.empty((1, 2), np.float32))
    with pytest.raises(IndexError, match="index out of range in self"):
        _C.nn_embedding_backward(np.ones((2, 2), np.float32), np.array([0, 4]), np.empty((4, 2), np.float32), -1,
                                 False)


def test_embedding_backward_is_deterministic_and_matches_add_at():
    n, rows, dim = 20000, 300, 33
    i = RNG.integers(0, rows, n)
    g = RNG.standard_normal((n, dim)).astype(np.float32)
    ref = np.zeros((rows, dim))
    np.add.at(ref, i, g.astype(np.float64))
    first = np.full((rows, dim), np.nan, np.float32)  # the kernel zeroes its output
    S.nn_embedding_backward(g, i, rows, -1, False, first)
    np.testing.assert_allclose(first, ref, rtol=1e-4, atol=1e-4)
    for _ in range(3):
        again = np.empty((rows, dim), np.float32)
        S.nn_embedding_backward(g, i, rows, -1, False, again)
        np.testing.assert_array_equal(again, first)  # bit for bit: each row summed in index order


def test_embedding_indices_changed_during_the_call_never_escape():
    # Another thread rewrites the indices while the kernels run without the GIL: every index is
    # checked as it is read, so the worst outcome is an IndexError, never an out-of-bounds access.
    w = np.ones((64, 16), np.float32)
    i = np.zeros(200000, np.int64)
    stop = threading.Event()

    def scribble():
        k = 0
        while not stop.is_set():
            i[k % i.size] = 10 ** 9 if k % 2 else 3
            k += 7919

    t = threading.Thread(target=scribble)
    t.start()
    try:
        for _ in range(20):
            for call in (lambda: _C.nn_embedding(w, i, np.empty((i.size, 16), np.float32)),
                         lambda: _C.nn_embedding_backward(np.ones((i.size, 16), np.float32), i,
                                                          np.empty((64, 16), np.float32), -1, True)):
                try:
                    call()
                except IndexError:
                    pass
    finally:
        stop.set()
        t.join()

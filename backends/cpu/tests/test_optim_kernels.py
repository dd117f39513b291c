"""The fused optimizer kernels (flambeau_cpu.kernels.optim), called directly on numpy arrays.

They serve ops that flambeau-optim declares; these tests need only the backend.
"""
from __future__ import annotations

import numpy as np
import pytest

from flambeau_cpu import _C
from flambeau_cpu.kernels import optim as K

pytestmark = pytest.mark.skipif(not K.KERNELS, reason="extension built without the optimizer kernels")


def _arrays(dtype, sizes=(5, 70000, 1), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=n).astype(dtype) for n in sizes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_kernel_matches_formula(dtype):
    p, g = _arrays(dtype), _arrays(dtype, seed=1)
    m, v, vmax = [np.zeros_like(a) for a in p], [np.zeros_like(a) for a in p], [np.zeros_like(a) for a in p]
    steps = [np.array(0.0, np.float32) for _ in p]
    ref = [a.astype(np.float64) for a in p]
    rm, rv, rvmax = [0.0] * 3, [0.0] * 3, [0.0] * 3
    for t in range(1, 4):
        K.optim_adam(p, g, m, v, vmax, steps, True, 0.9, 0.99, 0.01, 0.1, 1e-8, False, True)
        for i in range(3):
            gi = g[i].astype(np.float64)
            ref[i] = ref[i] * (1 - 0.01 * 0.1)
            rm[i] = 0.9 * rm[i] + 0.1 * gi
            rv[i] = 0.99 * rv[i] + 0.01 * gi * gi
            rvmax[i] = np.maximum(rvmax[i], rv[i])
            ref[i] = ref[i] - 0.01 / (1 - 0.9 ** t) * rm[i] / (np.sqrt(rvmax[i] / (1 - 0.99 ** t)) + 1e-8)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for i in range(3):
        np.testing.assert_allclose(p[i], ref[i], rtol=tol, atol=tol)
    assert [float(s) for s in steps] == [3.0, 3.0, 3.0]


def test_sgd_kernel_first_step_and_momentum():
    p, g = _arrays(np.float64), _arrays(np.float64, seed=1)
    bufs = [np.zeros_like(a) for a in p]
    start = [a.copy() for a in p]
    K.optim_sgd(p, g, bufs, 0.0, 0.9, 0.1, 0.5, False, False, True)
    for i in range(3):
        np.testing.assert_allclose(bufs[i], g[i])
        np.testing.assert_allclose(p[i], start[i] - 0.1 * g[i])
    K.optim_sgd(p, g, bufs, 0.0, 0.9, 0.1, 0.5, False, False, False)
    for i in range(3):
        np.testing.assert_allclose(bufs[i], 0.9 * g[i] + 0.5 * g[i])


def test_adagrad_and_rmsprop_kernels():
    p, g = _arrays(np.float64), _arrays(np.float64, seed=1)
    sums = [np.full_like(a, 0.5) for a in p]
    start = [a.copy() for a in p]
    K.optim_adagrad(p, g, sums, [np.array(0.0, np.float32) for _ in p], 0.1, 0.0, 0.0, 1e-10, False)
    for i in range(3):
        np.testing.assert_allclose(p[i], start[i] - 0.1 * g[i] / (np.sqrt(0.5 + g[i] ** 2) + 1e-10))
    p = [a.copy() for a in start]
    sq, ga, buf = ([np.zeros_like(a) for a in p] for _ in range(3))
    K.optim_rmsprop(p, g, sq, ga, buf, [np.array(0.0, np.float32) for _ in p], 0.01, 0.9, 1e-8, 0.0, 0.5, True,
                    False)
    for i in range(3):
        s, a = 0.1 * g[i] ** 2, 0.1 * g[i]
        np.testing.assert_allclose(p[i], start[i] - 0.01 * g[i] / (np.sqrt(s - a * a) + 1e-8), rtol=1e-12)


def test_noncontiguous_and_half_go_through_working_copies():
    base = np.random.default_rng(3).normal(size=(6, 4))
    p = [base[:, 1]]  # a strided view: updated in place through a copy
    g = [np.ones(6)]
    K.optim_sgd(p, g, [], 0.0, 0.0, 0.5, 0.0, False, False, False)
    np.testing.assert_allclose(base[:, 1], p[0])
    half = [np.ones(3, np.float16)]
    K.optim_sgd(half, [np.ones(3, np.float16)], [], 0.0, 0.0, 0.25, 0.0, False, False, False)
    assert half[0].dtype == np.float16 and half[0].tolist() == [0.75, 0.75, 0.75]


def test_c_kernels_check_their_inputs():
    p, g = [np.zeros(4, np.float32)], [np.zeros(5, np.float32)]
    with pytest.raises(ValueError, match="does not match"):
        _C.optim_sgd(p, g, [], 0.0, 0.0, 0.1, 0.0, False, False, False)
    with pytest.raises(ValueError, match="as many tensors"):
        _C.optim_sgd(p, [], [], 0.0, 0.0, 0.1, 0.0, False, False, False)
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.optim_sgd([np.zeros((4, 2), np.float32)[:, 0]], [np.zeros(4, np.float32)], [], 0.0, 0.0, 0.1, 0.0, False,
                     False, False)
    with pytest.raises(TypeError, match="float32 or float64"):
        _C.optim_sgd([np.zeros(4, np.int64)], [np.zeros(4, np.int64)], [], 0.0, 0.0, 0.1, 0.0, False, False, False)
    readonly = np.zeros(4, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        _C.optim_sgd([readonly], [np.zeros(4, np.float32)], [], 0.0, 0.0, 0.1, 0.0, False, False, False)

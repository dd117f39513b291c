"""The C++ kernels as flambeau runs them: the glue in flambeau_cpu.kernels.native picks C++ or numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu import _C
from flambeau_cpu.kernels import native

BIG = (300, 257)  # above native.GRAIN: the C++ path when there are several threads


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    old = fb.get_num_threads()
    fb.set_num_threads(request.param)
    yield request.param
    fb.set_num_threads(old)


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_set_num_threads_reaches_the_kernels():
    old = fb.get_num_threads()
    try:
        fb.set_num_threads(3)
        assert fb.get_num_threads() == 3 == _C.get_num_threads()
        fb.set_num_threads(1)
        assert _C.get_num_threads() == 1
        with pytest.raises(RuntimeError, match="positive"):
            _C.set_num_threads(0)
        with pytest.raises(RuntimeError, match="positive"):
            fb.set_num_threads(-2)
        assert fb.get_num_threads() == 1
    finally:
        fb.set_num_threads(old)


def test_native_kernels_are_registered():
    from flambeau.ops._registry import TABLES

    from flambeau_cpu.kernels._wide import ACCUMULATING_OPS

    for name in ("add", "sub", "div", "maximum", "lt", "exp", "tanh", "erf", "sigmoid", "sum", "max_dim", "argmax"):
        kernel = TABLES["cpu"][name]
        if name in ACCUMULATING_OPS:  # inside the half-precision wrapper (see _wide)
            kernel = kernel.__wrapped__
        assert kernel is native.KERNELS[name]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arithmetic(threads, dtype):
    a, b = _rand(BIG, dtype, 1), _rand(BIG[1:], dtype, 2)
    ta, tb = fb.from_numpy(a), fb.from_numpy(b)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    # a + alpha*b may be one fused multiply-add (as in PyTorch): within an ulp of |a| + |alpha*b|.
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(fb.add(ta, tb, alpha=3).numpy(), a + 3 * b, rtol=0,
                               atol=2 * eps * (np.abs(a) + 3 * np.abs(b)).max())
    np.testing.assert_allclose(fb.sub(ta, tb, alpha=0.5).numpy(), a - dtype(0.5) * b, rtol=0,
                               atol=2 * eps * (np.abs(a) + np.abs(b)).max())
    np.testing.assert_array_equal((ta * 2.5).numpy(), a * dtype(2.5))
    np.testing.assert_array_equal((ta / tb).numpy(), a / b)
    np.testing.assert_array_equal(fb.maximum(ta, tb).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal((ta.t() < 0.25).numpy(), a.T < dtype(0.25))
    np.testing.assert_array_equal((ta >= tb).numpy(), a >= b)


def test_in_place_and_out(threads):
    a, b = _rand(BIG, seed=3), _rand(BIG, seed=4)
    t = fb.from_numpy(a.copy())
    t.add_(fb.from_numpy(b), alpha=2)
    np.testing.assert_allclose(t.numpy(), a + 2 * b, rtol=0, atol=2e-7 * np.abs(a + 2 * b).max())
    out = fb.from_numpy(np.empty(BIG[::-1], np.float32)).t()
    fb.mul(fb.from_numpy(a), fb.from_numpy(b), out=out)
    np.testing.assert_array_equal(out.numpy(), a * b)


def test_numpy_handles_what_cpp_does_not(threads):
    a = _rand(BIG)
    ints = np.arange(np.prod(BIG), dtype=np.int64).reshape(BIG)
    ta, ti = fb.from_numpy(a), fb.from_numpy(ints)
    np.testing.assert_array_equal((ti + ti).numpy(), ints + ints)                 # integers
    np.testing.assert_allclose((ta + ti).numpy(), a + ints.astype(np.float32))   # mixed dtypes
    np.testing.assert_array_equal(fb.div(ta, 0.3, rounding_mode="floor").numpy(), np.floor(a / np.float32(0.3)))


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "neg", "abs", "tanh", "sigmoid", "erf", "erfc"])
def test_unary(threads, op):
    a = _rand(BIG, np.float32, 5)
    ref = {
        "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "neg": np.negative, "abs": np.abs, "tanh": np.tanh,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc),
    }[op]
    with np.errstate(all="ignore"):
        expected = ref(a.astype(np.float64)).astype(np.float32)
        got = getattr(fb, op)(fb.from_numpy(a)).numpy()
    np.testing.assert_allclose(got, expected, rtol=4e-6, atol=1e-37, equal_nan=True)


def test_erf_of_small_and_integer_tensors():
    x = fb.tensor([0.0, 0.5, -2.0])
    np.testing.assert_allclose(fb.erf(x).numpy(), [0.0, math.erf(0.5), math.erf(-2.0)], rtol=1e-6)
    i = fb.tensor([0, 1, -3])
    assert fb.erf(i).dtype == fb.float32
    np.testing.assert_allclose(fb.erfc(i).numpy(), [1.0, math.erfc(1), math.erfc(-3)], rtol=1e-6)
    np.testing.assert_allclose(fb.sigmoid(fb.tensor([0.0, 100.0, -100.0], dtype=fb.float64)).numpy(),
                               [0.5, 1.0, math.exp(-100)], rtol=1e-12)


@pytest.mark.parametrize("dim,keepdim",
                         [(None, False), (0, False), (1, True), ((0, 1), False), (-1, False), ((), True)])
def test_reductions(threads, dim, keepdim):
    a = _rand((400, 130), np.float32, 6)
    t = fb.from_numpy(a)
    axis = None if dim in (None, ()) else dim
    a64 = a.astype(np.float64)
    kwargs = {} if dim is None else {"dim": dim}
    np.testing.assert_allclose(t.sum(keepdim=keepdim, **kwargs).numpy(),
                               a64.sum(axis=axis, keepdims=keepdim), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t.mean(keepdim=keepdim, **kwargs).numpy(),
                               a64.mean(axis=axis, keepdims=keepdim), rtol=1e-5, atol=1e-6)
    if dim is not None:
        np.testing.assert_array_equal(fb.amax(t, dim, keepdim).numpy(), a.max(axis=axis, keepdims=keepdim))
        np.testing.assert_array_equal(fb.amin(t, dim, keepdim).numpy(), a.min(axis=axis, keepdims=keepdim))


@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False)])
def test_max_min_along_a_dim(threads, dim, keepdim):
    a = _rand((400, 130), np.float64, 7)
    t = fb.from_numpy(a)
    values, indices = fb.max(t, dim, keepdim)
    np.testing.assert_array_equal(values.numpy(), a.max(axis=dim, keepdims=keepdim))
    np.testing.assert_array_equal(indices.numpy(), np.argmax(a, axis=dim, keepdims=keepdim))
    values, indices = fb.min(t, dim, keepdim)
    np.testing.assert_array_equal(values.numpy(), a.min(axis=dim, keepdims=keepdim))
    np.testing.assert_array_equal(fb.argmin(t, dim, keepdim).numpy(), np.argmin(a, axis=dim, keepdims=keepdim))
    assert fb.argmax(t).item() == int(np.argmax(a))

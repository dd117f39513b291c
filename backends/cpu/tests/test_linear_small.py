"""The tiny nn_linear path (``_C.linear_small``, csrc/nn_linear.cpp): out = input @ weight.T + bias in
one C++ loop for 2-D float32/float64 products of at most 4096 multiply-adds (issue 13's Linear(4, 4)
bar: numpy's matmul and add were a third of the call). It must agree with numpy, and refuse (return
False, out untouched) everything it does not take, so that the numpy/BLAS path runs instead.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau_cpu import _C


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 20), m=st.integers(0, 20), k=st.integers(0, 20),
       dtype=st.sampled_from([np.float32, np.float64]), with_bias=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_matches_numpy(n: int, m: int, k: int, dtype: type, with_bias: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(dtype)
    w = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal(m).astype(dtype) if with_bias else None
    out = np.full((n, m), np.nan, dtype)
    taken = _C.linear_small(x, w, b, out)
    assert taken == (n * m * k <= 4096 and n * m <= 4096)
    if taken:
        expected = x.astype(np.float64) @ w.astype(np.float64).T + (0 if b is None else b)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol * max(k, 1))
    else:
        assert np.isnan(out).all()


def _refused(x, w, b, out) -> None:
    before = out.copy()
    assert _C.linear_small(x, w, b, out) is False
    np.testing.assert_array_equal(out, before)


def test_refuses_what_it_does_not_take() -> None:
    f32 = np.ones((3, 4), np.float32)
    w = np.ones((5, 4), np.float32)
    out = np.zeros((3, 5), np.float32)
    _refused(f32.astype(np.float64), w, None, out)  # mixed dtypes
    _refused(f32.astype(np.complex64), w.astype(np.complex64), None, out.astype(np.complex64))
    _refused(f32.astype(np.float16), w.astype(np.float16), None, out.astype(np.float16))
    _refused(np.ones((4, 3), np.float32).T, w, None, out)  # strided input
    _refused(f32, np.ones((4, 5), np.float32).T, None, out)  # strided weight
    _refused(f32, np.ones((5, 3), np.float32), None, out)  # k mismatch
    _refused(f32, w, None, np.zeros((3, 4), np.float32))  # out of the wrong shape
    _refused(f32, w, np.ones(4, np.float32), out)  # bias of the wrong length
    _refused(f32, w, np.ones((1, 5), np.float32), out)  # 2-D bias
    _refused(f32, w, [1.0] * 5, out)  # not an array
    _refused(np.ones(4, np.float32), w, None, np.zeros(5, np.float32))  # 1-D input
    _refused(np.ones((1, 4097), np.float32), np.ones((1, 4097), np.float32), None, np.zeros((1, 1), np.float32))
    _refused(np.ones((65, 1), np.float32), np.ones((65, 1), np.float32), None, np.zeros((65, 65), np.float32))


def test_refuses_out_overlapping_an_operand() -> None:
    buf = np.ones((4, 4), np.float32)
    _refused(buf, np.ones((4, 4), np.float32), None, buf)


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_linear_layer_on_the_small_path(dtype) -> None:
    """nn.Linear(4, 4) on (1, 4) and (3, 4) inputs, forward and gradients, against numpy."""
    pytest.importorskip("flambeau.nn")  # not in the backend's own environment (tox backend-cpu)
    lin = fb.nn.Linear(4, 4, dtype=dtype)
    for rows in (1, 3):
        x = fb.randn(rows, 4, dtype=dtype, requires_grad=True)
        y = lin(x)
        w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() @ w.T + b, rtol=1e-5, atol=1e-6)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.ones((rows, 4)) @ w, rtol=1e-5, atol=1e-6)
        lin.zero_grad()

"""``addmm`` and ``nn_linear`` fuse the bias into one BLAS gemm (``blas._gemm``) for large products too,
where neither operand needs a copy: numpy's matmul followed by its add made a second, single-threaded
pass over the result. Results against numpy; which path ran, through a counting gemm."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau  # noqa: F401  (first: the backend's kernels import flambeau's codegen while loading)
from flambeau_cpu.kernels import blas, nn_linear

RNG = np.random.default_rng(3)


@pytest.fixture
def gemm_calls(monkeypatch):
    calls = []
    table = dict(blas._gemms())
    for dt, fn in list(table.items()):
        table[dt] = (lambda f: lambda *a: calls.append(1) or f(*a))(fn)
    monkeypatch.setattr(blas, "_GEMM", table)
    return calls


def _operand(shape, order, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    if order == "F":
        return np.asfortranarray(x)
    if order == "strided":
        return np.repeat(x, 2, axis=1)[:, ::2]  # neither C nor Fortran order
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("order_a,order_b", [("C", "C"), ("C", "F"), ("F", "C"), ("strided", "C"), ("C", "strided")])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1)])
@pytest.mark.parametrize("bias_shape", ["row", "full"])
def test_large_addmm_fuses_when_no_operand_is_copied(dtype, order_a, order_b, beta, alpha, bias_shape, gemm_calls):
    n, k, m = 130, 70, 90  # 819k multiply-adds, over GEMM_MAX_WORK
    assert n * k * m > blas.GEMM_MAX_WORK
    a, b = _operand((n, k), order_a, dtype), _operand((k, m), order_b, dtype)
    inp = RNG.standard_normal((m,) if bias_shape == "row" else (n, m)).astype(dtype)
    out = np.full((n, m), np.nan, dtype)
    blas.addmm(inp, a, b, beta, alpha, out)
    want = beta * inp.astype(np.complex128) + alpha * (a.astype(np.complex128) @ b)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.abs(want).max())
    fused = beta != 0 and "strided" not in (order_a, order_b)
    assert len(gemm_calls) == (1 if fused else 0)


def test_large_addmm_in_place(gemm_calls):
    a, b = _operand((100, 60), "C", np.float64), _operand((60, 80), "F", np.float64)
    out = RNG.standard_normal((100, 80))
    want = 0.5 * out + a @ b
    blas.addmm(out, a, b, 0.5, 1, out)  # out is input: read before the product writes it
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert gemm_calls == [1]


def test_large_linear_with_bias_fuses(gemm_calls):
    x = RNG.standard_normal((4, 64, 96)).astype(np.float32)
    w = RNG.standard_normal((80, 96)).astype(np.float32)
    bias = RNG.standard_normal(80).astype(np.float32)
    out = np.empty((4, 64, 80), np.float32)
    nn_linear.nn_linear(x, w, bias, out)
    np.testing.assert_allclose(out, x @ w.T + bias, rtol=1e-4, atol=1e-3)
    assert gemm_calls == [1]

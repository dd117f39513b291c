"""The scaled-accumulate products (``beta * input + alpha * A @ B``) through numpy's BLAS.

The product goes straight into ``out`` when ``out`` does not share memory with ``input`` (the
common, functional case), so the only extra passes are the scaling and the accumulation, which
are skipped when ``alpha == 1`` / ``beta == 0``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _scalar(value: Any, out: np.ndarray) -> Any:
    """``value`` as the output's kind of number (PyTorch casts alpha and beta to the result dtype)."""
    kind = out.dtype.kind
    if kind in "iu":
        return int(value.real if isinstance(value, complex) else value)
    if kind == "b":
        return bool(value)
    return value


def _accumulate(out: np.ndarray, input: np.ndarray, beta: Any, alpha: Any, product: Callable[..., Any]) -> None:
    """``out = beta * input + alpha * product()``; ``product(out=...)`` writes the product."""
    beta, alpha = _scalar(beta, out), _scalar(alpha, out)
    if out.dtype.kind == "b":
        prod = product(None)
        keep = np.logical_and(input, beta) if beta else np.zeros((), bool)
        np.logical_or(keep, np.logical_and(prod, alpha), out=out)
        return
    if np.shares_memory(out, input):  # in place: read input before the product lands
        prod = product(None)
        if beta == 0:
            out[...] = 0  # PyTorch ignores input entirely (NaN included) when beta is 0
        elif beta != 1:
            np.multiply(out, beta, out=out)
        if alpha != 1:
            prod = np.multiply(prod, alpha, out=prod if prod.dtype == out.dtype else None)
        np.add(out, prod, out=out, casting="unsafe")
        return
    if out.ndim == 0 or out.size == 0:
        out[...] = product(None)
    else:
        product(out)
    if alpha != 1:
        np.multiply(out, alpha, out=out, casting="unsafe")
    if beta == 1:
        np.add(out, input, out=out, casting="unsafe")
    elif beta != 0:
        np.add(out, np.multiply(input, beta), out=out, casting="unsafe")


def _matmul(a: np.ndarray, b: np.ndarray) -> Callable[[Any], Any]:
    def product(out: Any) -> Any:
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)

    return product


def addmm(input, mat1, mat2, beta, alpha, out):
    _accumulate(out, input, beta, alpha, _matmul(mat1, mat2))


def addmv(input, mat, vec, beta, alpha, out):
    _accumulate(out, input, beta, alpha, _matmul(mat, vec))


def addbmm(input, batch1, batch2, beta, alpha, out):
    # sum_b A_b @ B_b is one product: [A_0 A_1 ...] (n x b*k) times [B_0; B_1; ...] (b*k x m)
    b, n, k = batch1.shape
    m = batch2.shape[2]
    a = batch1.transpose(1, 0, 2).reshape(n, b * k)
    c = batch2.reshape(b * k, m)
    _accumulate(out, input, beta, alpha, _matmul(a, c))


def baddbmm(input, batch1, batch2, beta, alpha, out):
    _accumulate(out, input, beta, alpha, _matmul(batch1, batch2))


def addr(input, vec1, vec2, beta, alpha, out):
    def product(dst: Any) -> Any:
        a, b = vec1.astype(out.dtype, copy=False), vec2.astype(out.dtype, copy=False)
        if out.dtype.kind == "b":
            return np.logical_and.outer(a, b)
        return np.multiply.outer(a, b) if dst is None else np.multiply(a[:, None], b, out=dst)

    _accumulate(out, input.astype(out.dtype, copy=False), beta, alpha, product)


def vdot(input, other, out):
    out[()] = np.vdot(input, other)


KERNELS: dict[str, Callable[..., Any]] = {
    "addmm": addmm, "addmv": addmv, "addr": addr, "addbmm": addbmm, "baddbmm": baddbmm, "vdot": vdot,
}

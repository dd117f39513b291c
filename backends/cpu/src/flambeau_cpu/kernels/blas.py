"""The scaled-accumulate products (``beta * input + alpha * A @ B``) on numpy's BLAS.

Small addmm/addbmm products are one fused BLAS gemm (scipy's wrapper). Otherwise the product goes
straight into ``out`` when ``out`` does not share memory with ``input`` (the functional case), so
the only extra passes are the scaling and the accumulation, skipped when ``alpha == 1`` /
``beta == 0``. In-place calls compute the product first, then scale ``input`` where it lies.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _threads
from ._int_scalars import fitted
from ._quiet import quiet_all


def _scalar(value: Any, out: np.ndarray) -> Any:
    """``value`` as the output's kind of number (PyTorch casts alpha and beta to the result dtype)."""
    kind = out.dtype.kind
    if kind in "iu":  # (-1 for uint8 is 255: the meta function let it through, PyTorch wraps it)
        return fitted(int(value.real if isinstance(value, complex) else value), out.dtype)
    if kind == "b":
        return bool(value)
    return value


def _accumulate(out: np.ndarray, input: np.ndarray, beta: Any, alpha: Any, product: Callable[..., Any]) -> None:
    """``out = beta * input + alpha * product()``; ``product(out=...)`` writes the product."""
    if out.dtype.kind in "fc" and out.ndim and not np.may_share_memory(out, input):
        # the common case, kept lean for small products: the product lands in out, then one pass each
        product(out)
        if alpha != 1:
            out *= alpha
        if beta == 1:
            out += input
        elif beta != 0:
            out += beta * input
        return
    beta, alpha = _scalar(beta, out), _scalar(alpha, out)
    if out.dtype.kind == "b":
        prod = product(None)
        keep = np.logical_and(input, beta) if beta else np.zeros((), bool)
        np.logical_or(keep, np.logical_and(prod, alpha), out=out)
        return
    if np.may_share_memory(out, input):  # in place: read input before the product lands
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


_GEMM: dict[np.dtype, Any] | None = None  # dtype -> scipy's gemm; filled at the first small product


def _gemms() -> dict[np.dtype, Any]:
    """scipy's BLAS gemm by dtype (gemm fuses beta and alpha into the product: one call, no extra
    passes). Imported at the first small product, not at ``import flambeau``: scipy.linalg costs
    ~0.2 s to import."""
    global _GEMM
    if _GEMM is None:
        try:
            from scipy.linalg import blas
        except ImportError:  # pragma: no cover - scipy is a dependency; numpy alone still works
            _GEMM = {}
        else:
            _GEMM = {np.dtype(np.float32): blas.sgemm, np.dtype(np.float64): blas.dgemm,
                     np.dtype(np.complex64): blas.cgemm, np.dtype(np.complex128): blas.zgemm}
            _threads.share_new_pools()  # scipy's OpenBLAS has just been loaded: onto the one pool
    return _GEMM


def _fortran_operand(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``x.T`` as BLAS wants it (Fortran order), or ``x`` itself with the transpose flag, without a copy."""
    if x.T.flags.f_contiguous:
        return x.T, 0
    if x.flags.f_contiguous:
        return x, 1
    return np.asfortranarray(x.T), 0


def _holds_input(out: np.ndarray, input: np.ndarray, beta: Any) -> bool:
    """Put ``input`` into ``out`` for a fused call; False when they overlap other than exactly."""
    if out is input:
        return True  # in place: out already holds input
    if np.may_share_memory(out, input):
        return input.shape == out.shape and input.strides == out.strides and \
            np.byte_bounds(input) == np.byte_bounds(out)
    if beta != 0:
        np.copyto(out, input)
    return True


#: Up to this many multiply-adds the fused gemm wins (numpy's three ufunc passes cost more than the
#: product). Larger products go through numpy's own BLAS (scipy's bundled OpenBLAS runs on the same
#: OpenMP team, see ``_threads``, but numpy's matmul needs no operand copies), unless they add to an
#: input (beta != 0) and neither operand needs a copy: then the fused gemm saves numpy's separate add,
#: a single-threaded pass over the result (an LSTM's input projection, (1024, 64) @ (64, 512) + bias:
#: 0.50 -> 0.39 ms on 2 threads).
GEMM_MAX_WORK = 48 ** 3

#: BLAS's 32-bit int arguments: the fused gemm takes no dimension at or above this.
_BLAS_INT = 2 ** 31


def _in_place_operand(x: np.ndarray) -> bool:
    """Whether BLAS can read ``x`` as it is (C or Fortran order: :func:`_fortran_operand` copies nothing)."""
    return x.flags.c_contiguous or x.flags.f_contiguous


def _gemm(out: np.ndarray, input: np.ndarray, a: np.ndarray, b: np.ndarray, beta: Any, alpha: Any) -> bool:
    """``out = beta * input + alpha * a @ b`` as one BLAS gemm; False when the operands don't suit it."""
    if out.ndim != 2 or a.shape[1] == 0:
        return False
    if out.size * a.shape[1] > GEMM_MAX_WORK and (
            beta == 0 or not (_in_place_operand(a) and _in_place_operand(b))
            or max(out.shape[0], out.shape[1], a.shape[1]) >= _BLAS_INT):
        return False
    gemm = (_GEMM if _GEMM is not None else _gemms()).get(out.dtype)
    if gemm is None or not out.flags.c_contiguous or out.size == 0 or not _holds_input(out, input, beta):
        return False
    # C-ordered out is Fortran-ordered out.T = alpha * b.T @ a.T + beta * out.T
    bt, trans_b = _fortran_operand(b)
    at, trans_a = _fortran_operand(a)
    target = out.T
    result = gemm(alpha, bt, at, beta, target, trans_b, trans_a, 1)  # positional: f2py parses them faster
    if result is not target:  # pragma: no cover - f2py copied c after all
        out[...] = result.T
    return True


def _matmul(a: np.ndarray, b: np.ndarray) -> Callable[[Any], Any]:
    def product(out: Any) -> Any:
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)

    return product


def addmm(input, mat1, mat2, beta, alpha, out):
    if _gemm(out, input, mat1, mat2, beta, alpha):
        return
    _accumulate(out, input, beta, alpha, _matmul(mat1, mat2))


def addmv(input, mat, vec, beta, alpha, out):
    _accumulate(out, input, beta, alpha, _matmul(mat, vec))


def addbmm(input, batch1, batch2, beta, alpha, out):
    # sum_b A_b @ B_b is one product: [A_0 A_1 ...] (n x b*k) times [B_0; B_1; ...] (b*k x m)
    b, n, k = batch1.shape
    m = batch2.shape[2]
    a = batch1.transpose(1, 0, 2).reshape(n, b * k)
    c = batch2.reshape(b * k, m)
    if _gemm(out, input, a, c, beta, alpha):
        return
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


# Products of inf and 0 give NaN without numpy's RuntimeWarning, as PyTorch's BLAS calls do.
KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    "addmm": addmm, "addmv": addmv, "addr": addr, "addbmm": addbmm, "baddbmm": baddbmm, "vdot": vdot,
})

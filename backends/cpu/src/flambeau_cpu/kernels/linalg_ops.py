"""CPU kernels of ``flambeau.linalg``: numpy.linalg (batched LAPACK loops) and scipy.linalg.

The kernels that need nothing beyond numpy (det, slogdet, qr, eig, eigvals, eigh, svd, svdvals,
lstsq) are core-tensor's host decompositions' (``flambeau._core_ops.decomp.host_linalg``), imported
here; the ones below use scipy's LAPACK (faster solves and factorizations, LAPACK's status codes).

The meta functions have checked shapes and dtypes; what is left here are the errors that depend
on values (singular or indefinite matrices), raised as :class:`flambeau.linalg.LinAlgError` with
PyTorch's wording and the failing matrix's batch index.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from flambeau.linalg import LinAlgError

from .. import _threads
from ._quiet import quiet_all


# The numpy-only kernels are core-tensor's host decompositions' (one copy); they are imported at their
# first call, since core-tensor loads its decompositions' modules only when one runs (import time).
def _host(name: str) -> Any:
    from flambeau._core_ops.decomp import host_linalg

    return getattr(host_linalg, name)


def substitute(T: np.ndarray, B: np.ndarray, lower: bool, unit: bool = False) -> np.ndarray:
    from flambeau._core_ops.decomp._host_lu import substitute as host_substitute

    return host_substitute(T, B, lower, unit)


# LU (getrf) and the routines built on it run with BLAS on one thread: OpenBLAS's parallel LU splits
# its jobs between its own pool and the shared team, which then wait for each other (_threads).
def linalg_det(A, out):
    with _threads.one_blas_thread():
        return _host("linalg_det")(A, out)


def linalg_slogdet(A, out):
    with _threads.one_blas_thread():
        return _host("linalg_slogdet")(A, out)


def linalg_qr(A, mode, out):
    return _host("linalg_qr")(A, mode, out)


def linalg_eig(A, out):
    return _host("linalg_eig")(A, out)


def linalg_eigvals(A, out):
    return _host("linalg_eigvals")(A, out)


def linalg_eigh(A, UPLO, out):
    return _host("linalg_eigh")(A, UPLO, out)


def linalg_svd(A, full_matrices, driver, out):
    return _host("linalg_svd")(A, full_matrices, driver, out)


def linalg_svdvals(A, driver, out):
    return _host("linalg_svdvals")(A, driver, out)


def linalg_lstsq(A, B, rcond, driver):
    return _host("linalg_lstsq")(A, B, rcond, driver)


class _Lazy:
    """A scipy module imported at first use (not at ``import flambeau``).

    Importing scipy.linalg loads scipy's own OpenBLAS, with a pthreads pool of its own: its LAPACK
    calls (getrf behind lu_factor and solve, potrf, ...) would run their parallel jobs there and
    leave its workers spinning against the kernels' OpenMP team. So the first use hands that
    OpenBLAS the one pool too, as the BLAS kernels do when they load scipy's gemm.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            import importlib

            module = importlib.import_module(self._name)
            _threads.share_new_pools()
            self._module = module
        return getattr(module, attr)


sla = _Lazy("scipy.linalg")
lapack = _Lazy("scipy.linalg.lapack")


def _axes(dim: Any, ndim: int) -> tuple[int, ...] | None:
    if dim is None or ndim == 0 or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None  # a 0-d input's dim 0 / -1 is all of it (numpy has no axis 0 there)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % ndim for d in dims)


def linalg_vector_norm(input, ord, dim, keepdim, dtype, out):
    x = input if dtype is None else input.astype(out.dtype if not np.iscomplexobj(input) else
                                                  np.result_type(out.dtype, np.complex64))
    axes = _axes(dim, x.ndim)
    a = np.abs(x) if (x.dtype.kind == "c" or ord != 2) else x
    if ord == 2:
        # sqrt of the sum of squares in the input's precision (as PyTorch; numpy's norm upcasts no better)
        res = np.sqrt(np.sum(a * a if a.dtype.kind != "c" else (a * a.conj()).real, axis=axes, keepdims=keepdim))
    elif ord == np.inf:
        res = np.max(a, axis=axes, keepdims=keepdim, initial=0)
    elif ord == -np.inf:
        res = np.min(a, axis=axes, keepdims=keepdim)
    elif ord == 0:
        res = np.sum(a != 0, axis=axes, keepdims=keepdim)
    elif ord == 1:
        res = np.sum(a, axis=axes, keepdims=keepdim)
    else:
        with np.errstate(divide="ignore"):
            res = np.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    np.copyto(out, np.reshape(res, out.shape), casting="unsafe")


def _matrices(A: np.ndarray):
    """(batch index, matrix) for each matrix of a batch."""
    flat = A.reshape((-1,) + A.shape[-2:])
    return enumerate(flat)


def _where(A: np.ndarray, i: int) -> str:
    return f"(Batch element {i}): " if A.ndim > 2 else ""


def _getrf_info(M: np.ndarray) -> int:
    getrf, = lapack.get_lapack_funcs(("getrf",), (M,))
    _, _, info = getrf(M)
    return int(info)


def _potrf_info(M: np.ndarray) -> tuple[np.ndarray, int]:
    potrf, = lapack.get_lapack_funcs(("potrf",), (M,))
    c, info = potrf(M, lower=True, clean=True)
    return c, int(info)


def _singular(op: str, A: np.ndarray) -> LinAlgError:
    for i, M in _matrices(A):
        info = _getrf_info(M)
        if info > 0:
            return LinAlgError(f"{op}: {_where(A, i)}The diagonal element {info} is zero, the inversion could not be "
                               "completed because the input matrix is singular.")
    return LinAlgError(f"{op}: The inversion could not be completed because the input matrix is singular.")


def linalg_inv(A, out):
    with _threads.one_blas_thread():
        if A.shape[-1] == 0:
            return
        try:
            np.copyto(out, np.linalg.inv(A))
        except np.linalg.LinAlgError:
            raise _singular("linalg.inv", A) from None


def linalg_inv_ex(A, check_errors, out):
    with _threads.one_blas_thread():
        inverse, info = out
        info.fill(0)
        if A.shape[-1] == 0:
            return
        try:
            np.copyto(inverse, np.linalg.inv(A))
            return
        except np.linalg.LinAlgError:
            if check_errors:
                raise _singular("linalg.inv_ex", A) from None
        flat_inv, flat_info = inverse.reshape((-1,) + A.shape[-2:]), info.reshape(-1)
        for i, M in _matrices(A):
            code = _getrf_info(M)
            flat_info[i] = code
            flat_inv[i] = np.nan if code else np.linalg.inv(M)
        if inverse.ndim > 2:
            np.copyto(inverse, flat_inv.reshape(inverse.shape))


def _gesv(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """One system through LAPACK's gesv directly (half numpy.linalg.solve's time at 256x256)."""
    gesv, = lapack.get_lapack_funcs(("gesv",), (A, B))
    _, _, x, info = gesv(A, B)
    if info > 0:
        raise np.linalg.LinAlgError("singular")
    return x


def linalg_solve(A, B, left, out):
    with _threads.one_blas_thread():
        vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
        try:
            if A.ndim == 2 and B.ndim <= 2 and left and A.shape[-1] and out.size:
                res = _gesv(A, B)
            elif vector:
                res = np.linalg.solve(A, B[..., None])[..., 0]
            elif left:
                res = np.linalg.solve(A, B)
            else:
                res = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)
        except np.linalg.LinAlgError:
            raise LinAlgError("flambeau.linalg.solve: The solver failed because the input matrix is "
                              "singular.") from None
        np.copyto(out, res)


def linalg_solve_triangular(A, B, upper, left, unitriangular, out):
    if out.size == 0:
        return
    A, B = (A, B) if left else (np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2))
    lower = not upper if left else upper  # transposing swaps the triangle that holds the data
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    try:
        res = sla.solve_triangular(A, B, lower=lower, unit_diagonal=unitriangular, check_finite=False)
    except np.linalg.LinAlgError:
        # a zero on the diagonal: PyTorch returns the infinities and NaNs of the substitution
        res = substitute(A, B, lower, unitriangular)
    np.copyto(out, res if left else np.swapaxes(res, -1, -2))


def _not_pd(op: str, A: np.ndarray) -> LinAlgError:
    for i, M in _matrices(A):
        _, info = _potrf_info(M)
        if info > 0:
            return LinAlgError(f"{op}: {_where(A, i)}The factorization could not be completed because the input is "
                               f"not positive-definite (the leading minor of order {info} is not positive-definite).")
    return LinAlgError(f"{op}: The factorization could not be completed because the input is not positive-definite.")


def _upper(L: np.ndarray) -> np.ndarray:
    return np.swapaxes(L, -1, -2).conj()


def linalg_cholesky(A, upper, out):
    if A.shape[-1] == 0:
        return
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise _not_pd("linalg.cholesky", A) from None
    np.copyto(out, _upper(L) if upper else L)


def linalg_cholesky_ex(A, upper, check_errors, out):
    L, info = out
    info.fill(0)
    if A.shape[-1] == 0:
        return
    try:
        res = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        if check_errors:
            raise _not_pd("linalg.cholesky_ex", A) from None
        flat = np.empty((int(np.prod(A.shape[:-2], dtype=np.int64)),) + A.shape[-2:], dtype=A.dtype)
        flat_info = info.reshape(-1)
        for i, M in _matrices(A):
            c, code = _potrf_info(M)
            flat[i], flat_info[i] = np.tril(c), code
        res = flat.reshape(A.shape)
    np.copyto(L, _upper(res) if upper else res)


def linalg_lu_factor(A, pivot, out):
    with _threads.one_blas_thread():
        LU, pivots = out
        if A.size == 0:
            pivots[...] = np.arange(1, pivots.shape[-1] + 1, dtype=np.int32)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sla.LinAlgWarning)
            lu, piv = sla.lu_factor(A, check_finite=False)
        np.copyto(LU, lu)
        np.copyto(pivots, piv + 1, casting="unsafe")
        k = pivots.shape[-1]
        diag = np.diagonal(lu, axis1=-2, axis2=-1)[..., :k]
        if A.shape[-1] == A.shape[-2] and np.any(diag == 0):
            first = int(np.argmax((diag == 0).reshape(-1, k).any(0))) + 1
            raise RuntimeError(f"flambeau.linalg.lu_factor: U[{first},{first}] is zero and using it on lu_solve would "
                               "result in a division by zero. If you still want to perform the factorization, consider "
                               "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def linalg_lu(A, pivot, out):
    with _threads.one_blas_thread():
        P, L, U = out
        if A.size == 0:
            for t in out:
                t.fill(0)
            for t in (P, L):
                if t.shape[-1] and t.shape[-2]:
                    idx = np.arange(min(t.shape[-2:]))
                    t[..., idx, idx] = 1
            return
        p, lower, upper = sla.lu(A, check_finite=False)
        np.copyto(P, p, casting="unsafe")
        np.copyto(L, lower)
        np.copyto(U, upper)


def linalg_lu_solve(LU, pivots, B, left, adjoint, out):
    if out.size == 0:
        return
    batch = out.shape[:-2]
    LU = np.broadcast_to(LU, batch + LU.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:]).astype(np.int32) - 1
    conj = LU.dtype.kind == "c"
    if left:
        res = sla.lu_solve((LU, piv), np.broadcast_to(B, out.shape), trans=2 if adjoint else 0, check_finite=False)
    else:
        # X A = B  <=>  A^T X^T = B^T ;  X A^H = B  <=>  A X^H = B^H
        Bt = np.swapaxes(np.broadcast_to(B, out.shape), -1, -2)
        if adjoint:
            res = np.swapaxes(sla.lu_solve((LU, piv), Bt.conj() if conj else Bt, trans=0, check_finite=False),
                              -1, -2)
            res = res.conj() if conj else res
        else:
            res = np.swapaxes(sla.lu_solve((LU, piv), Bt, trans=1, check_finite=False), -1, -2)
    np.copyto(out, res)


def linalg_cross(input, other, dim, out):
    shape = out.shape
    axis = dim % len(shape)
    np.copyto(out, np.cross(np.broadcast_to(input, shape), np.broadcast_to(other, shape), axis=axis),
              casting="unsafe")


# Norms, determinants and products of inputs with inf or NaN: inf/NaN results without numpy's warnings.
KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    name: fn for name, fn in globals().items() if name.startswith("linalg_") and callable(fn)
})

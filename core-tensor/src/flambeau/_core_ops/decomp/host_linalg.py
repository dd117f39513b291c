"""Host decompositions of ``flambeau.linalg``'s factorizations and solvers, by numpy.linalg (and
``_host_lu`` for what numpy lacks: LU, triangular solves, LAPACK's status codes).

Factorizations have no reasonable formulation on the core tier, so a backend without linalg
kernels computes them on the host (two transfers, no autograd history; see ``host.py``). The
composites declared on these primitives (``linalg_norm``, ``matrix_norm``, ``pinv``,
``matrix_rank``, ``eigvalsh``, ``matrix_power``, ``matrix_exp``, ``norm``...) then run too.

The kernels here take numpy arrays and write into ``out`` (a tuple for several outputs), the
calling convention of a backend kernel, so that a numpy backend can use them as they are: the
CPU backend takes the ones that need nothing beyond numpy from here (one copy) and keeps its
own, faster LAPACK (scipy) paths for the rest. Value-dependent errors (singular, not
positive-definite) are PyTorch's, with the failing matrix's batch index.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ... import _dtypes
from ..._tensor import Tensor
from ...ops._registry import OPS
from .._linalg_checks import LinAlgError
from . import _host_lu, decomposition
from ._util import op
from .host import _from_host, _to_host

# -- kernels (numpy arrays in, ``out`` written) ----------------------------------------------------


def _where(A: np.ndarray, i: int) -> str:
    return f"(Batch element {i}): " if A.ndim > 2 else ""


def _first_failure(A: np.ndarray, info: np.ndarray) -> tuple[int, int] | None:
    """(batch index, info) of the first matrix whose status is not 0."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    return (int(bad[0]), int(flat[bad[0]])) if bad.size else None


def singular_error(op: str, A: np.ndarray) -> LinAlgError:
    found = _first_failure(A, _host_lu.lu_factor(A)[2])
    if found is None:
        return LinAlgError(f"{op}: The inversion could not be completed because the input matrix is singular.")
    i, info = found
    return LinAlgError(f"{op}: {_where(A, i)}The diagonal element {info} is zero, the inversion could not be "
                       "completed because the input matrix is singular.")


def not_pd_error(op: str, A: np.ndarray, info: np.ndarray) -> LinAlgError:
    i, order = _first_failure(A, info) or (0, 0)
    return LinAlgError(f"{op}: {_where(A, i)}The factorization could not be completed because the input is not "
                       f"positive-definite (the leading minor of order {order} is not positive-definite).")


def linalg_det(A, out):
    with np.errstate(all="ignore"):
        np.copyto(out, np.linalg.det(A), casting="unsafe")


def linalg_slogdet(A, out):
    with np.errstate(all="ignore"):
        sign, logabs = np.linalg.slogdet(A)
    np.copyto(out[0], sign, casting="unsafe")
    np.copyto(out[1], logabs, casting="unsafe")


def linalg_inv(A, out):
    if A.shape[-1] == 0:
        return
    try:
        np.copyto(out, np.linalg.inv(A))
    except np.linalg.LinAlgError:
        raise singular_error("linalg.inv", A) from None


def linalg_inv_ex(A, check_errors, out):
    inverse, info = out
    info.fill(0)
    if A.shape[-1] == 0:
        return
    try:
        np.copyto(inverse, np.linalg.inv(A))
        return
    except np.linalg.LinAlgError:
        if check_errors:
            raise singular_error("linalg.inv_ex", A) from None
    codes = _host_lu.lu_factor(A)[2]
    np.copyto(info, codes)
    good = codes == 0
    values = np.full(A.shape, np.nan, A.dtype)
    values[good] = np.linalg.inv(A[good]) if A.ndim > 2 else np.linalg.inv(A)
    np.copyto(inverse, values)


def linalg_solve(A, B, left, out):
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
    if out.size == 0:
        return
    try:
        if vector:
            res = np.linalg.solve(A, B[..., None])[..., 0]
        elif left:
            res = np.linalg.solve(A, B)
        else:  # X A = B  <=>  A^T X^T = B^T
            res = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)
    except np.linalg.LinAlgError:
        raise LinAlgError("flambeau.linalg.solve: The solver failed because the input matrix is singular.") from None
    np.copyto(out, res)


def linalg_solve_triangular(A, B, upper, left, unitriangular, out):
    if out.size == 0:
        return
    A, B = (A, B) if left else (np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2))
    lower = not upper if left else upper  # transposing swaps the triangle that holds the data
    res = _host_lu.substitute(A, B, lower, unitriangular)  # a zero diagonal: inf/NaN, as PyTorch
    np.copyto(out, res if left else np.swapaxes(res, -1, -2))


def linalg_cholesky(A, upper, out):
    if A.shape[-1] == 0:
        return
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise not_pd_error("linalg.cholesky", A, _host_lu.potrf_info(A)[1]) from None
    np.copyto(out, np.swapaxes(L, -1, -2).conj() if upper else L)


def linalg_cholesky_ex(A, upper, check_errors, out):
    L, info = out
    info.fill(0)
    if A.shape[-1] == 0:
        return
    try:
        res = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        res, codes = _host_lu.potrf_info(A)
        if check_errors:
            raise not_pd_error("linalg.cholesky_ex", A, codes) from None
        np.copyto(info, codes)
    np.copyto(L, np.swapaxes(res, -1, -2).conj() if upper else res)


def _eye_fill(*arrays: np.ndarray) -> None:
    """Zeros with ones on the diagonal: the orthogonal factors of an empty matrix, as PyTorch."""
    for t in arrays:
        t.fill(0)
        if t.shape[-1] and t.shape[-2]:
            idx = np.arange(min(t.shape[-2:]))
            t[..., idx, idx] = 1


def linalg_qr(A, mode, out):
    Q, R = out
    if mode == "r":
        np.copyto(R, np.linalg.qr(A, mode="r") if A.size else 0)
        return
    if A.size == 0:
        R.fill(0)
        _eye_fill(Q)
        return
    q, r = np.linalg.qr(A, mode=mode)
    np.copyto(Q, q)
    np.copyto(R, r)


def linalg_lu_factor(A, pivot, out):
    LU, pivots = out
    lu, piv, _ = _host_lu.lu_factor(A)
    np.copyto(LU, lu)
    np.copyto(pivots, piv)
    k = pivots.shape[-1]
    diag = np.diagonal(lu, axis1=-2, axis2=-1)[..., :k]
    if A.shape[-1] == A.shape[-2] and np.any(diag == 0):
        first = int(np.argmax((diag == 0).reshape(-1, k).any(0))) + 1
        raise RuntimeError(f"flambeau.linalg.lu_factor: U[{first},{first}] is zero and using it on lu_solve would "
                           "result in a division by zero. If you still want to perform the factorization, consider "
                           "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def linalg_lu(A, pivot, out):
    P, L, U = out
    p, lower, upper = _host_lu.unpack(*_host_lu.lu_factor(A)[:2])
    np.copyto(P, p, casting="unsafe")
    np.copyto(L, lower)
    np.copyto(U, upper)


def linalg_lu_solve(LU, pivots, B, left, adjoint, out):
    if out.size == 0:
        return
    B = np.broadcast_to(B, out.shape)
    if left:
        res = _host_lu.lu_solve(LU, pivots, B, "H" if adjoint else "N")
    elif adjoint:  # X A^H = B  <=>  A X^H = B^H
        res = np.swapaxes(_host_lu.lu_solve(LU, pivots, np.swapaxes(B, -1, -2).conj()), -1, -2).conj()
    else:  # X A = B  <=>  A^T X^T = B^T
        res = np.swapaxes(_host_lu.lu_solve(LU, pivots, np.swapaxes(B, -1, -2), "T"), -1, -2)
    np.copyto(out, res)


def linalg_eig(A, out):
    values, vectors = out
    if A.shape[-1] == 0:
        return
    w, v = np.linalg.eig(A)
    np.copyto(values, w, casting="unsafe")
    np.copyto(vectors, v, casting="unsafe")


def linalg_eigvals(A, out):
    if A.shape[-1]:
        np.copyto(out, np.linalg.eigvals(A), casting="unsafe")


def linalg_eigh(A, UPLO, out):
    values, vectors = out
    if A.shape[-1] == 0:
        return
    w, v = np.linalg.eigh(A, UPLO=UPLO.upper())
    np.copyto(values, w)
    np.copyto(vectors, v)


def linalg_svd(A, full_matrices, driver, out):
    U, S, Vh = out
    if A.size == 0:
        _eye_fill(U, Vh)
        return
    u, s, vh = np.linalg.svd(A, full_matrices=full_matrices)
    np.copyto(U, u)
    np.copyto(S, s)
    np.copyto(Vh, vh)


def linalg_svdvals(A, driver, out):
    if A.size:
        np.copyto(out, np.linalg.svd(A, compute_uv=False))


def linalg_lstsq(A, B, rcond, driver):
    """lstsq's four results as arrays (a dynamic op: which are empty depends on ``driver``, as in
    PyTorch: residuals only for m > n and full rank with a driver other than gelsy; rank except
    for gels; singular values for gelsd and gelss)."""
    driver = driver or "gelsy"
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    batch = np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    A2 = np.broadcast_to(A, batch + A.shape[-2:]).reshape((-1,) + A.shape[-2:])
    B2 = np.broadcast_to(Bm, batch + Bm.shape[-2:]).reshape((-1,) + Bm.shape[-2:])
    m, n = A.shape[-2:]
    k = Bm.shape[-1]
    real = np.empty(0, dtype=A.dtype).real.dtype
    sol = np.empty((len(A2), n, k), dtype=A.dtype)
    ranks = np.empty(len(A2), dtype=np.int64)
    svals = np.empty((len(A2), min(m, n)), dtype=real)
    for i in range(len(A2)):  # numpy's lstsq takes one matrix
        x, _, rank, sv = np.linalg.lstsq(A2[i], B2[i], rcond=rcond)
        sol[i], ranks[i], svals[i] = x, rank, sv
    full_rank = bool(np.all(ranks == min(m, n)))
    if m > n and driver != "gelsy" and full_rank:
        resid = np.sum(np.abs(np.einsum("bij,bjk->bik", A2, sol) - B2) ** 2, axis=-2).astype(real)
        residuals = resid.reshape(batch + ((k,) if not vector else ()))
    else:
        residuals = np.empty(0, dtype=real)
    solution = sol.reshape(batch + (n, k))
    if vector:
        solution = solution[..., 0]
    rank_out = ranks.reshape(batch) if driver != "gels" else np.empty(0, dtype=np.int64)
    sv_out = svals.reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") else np.empty(0, dtype=real)
    return np.ascontiguousarray(solution), np.ascontiguousarray(residuals), rank_out, sv_out


# -- registration: host copies in, the kernel, results back -------------------------------------

def _register(name: str, kernel: Callable[..., Any]) -> None:
    @decomposition(name, "to_dtype", host=True)
    def composite(*args: Any) -> Any:
        spec = OPS[name].meta(*args)
        device = next(a._device for a in args if isinstance(a, Tensor))
        host = [_to_host(a) if isinstance(a, Tensor) else a for a in args]
        single = type(spec) is tuple and len(spec) == 2 and isinstance(spec[1], _dtypes.dtype)
        specs = [spec] if single else list(spec)
        outs = [np.empty(shape, dt.numpy_dtype) for shape, dt in specs]
        kernel(*host, out=outs[0] if single else tuple(outs))
        results = tuple(_from_host(o, dt, device) for o, (_, dt) in zip(outs, specs))
        return results[0] if single else results

    composite.__doc__ = f"``{name}`` by numpy on the host."


@decomposition("linalg_lstsq", "to_dtype", host=True)
def _lstsq(A: Tensor, B: Tensor, rcond: Any = None, driver: Any = None) -> tuple:
    """``linalg_lstsq`` by numpy on the host."""
    OPS["linalg_lstsq"].meta(A, B, rcond, driver)
    solution, residuals, rank, sv = linalg_lstsq(_to_host(A), _to_host(B), rcond, driver)
    real = A._dtype.to_real()
    return (_from_host(solution, A._dtype, A._device), _from_host(residuals, real, A._device),
            _from_host(rank, _dtypes.int64, A._device), _from_host(sv, real, A._device))


for _name, _kernel in (("linalg_det", linalg_det), ("linalg_slogdet", linalg_slogdet), ("linalg_inv", linalg_inv),
                       ("linalg_inv_ex", linalg_inv_ex), ("linalg_solve", linalg_solve),
                       ("linalg_solve_triangular", linalg_solve_triangular), ("linalg_cholesky", linalg_cholesky),
                       ("linalg_cholesky_ex", linalg_cholesky_ex), ("linalg_qr", linalg_qr),
                       ("linalg_lu_factor", linalg_lu_factor), ("linalg_lu", linalg_lu),
                       ("linalg_lu_solve", linalg_lu_solve), ("linalg_eig", linalg_eig),
                       ("linalg_eigvals", linalg_eigvals), ("linalg_eigh", linalg_eigh), ("linalg_svd", linalg_svd),
                       ("linalg_svdvals", linalg_svdvals)):
    _register(_name, _kernel)


@decomposition("norm", "linalg_vector_norm linalg_svdvals permute sum unsqueeze to_dtype")
def _norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """``torch.norm``: the vector norm for a number (``'fro'`` and None: the 2-norm, of the
    flattened dims); ``'nuc'``: the sum of the singular values of the matrices over the two dims
    (computed on the host)."""
    if p != "nuc":
        ord = 2 if p in ("fro", None) else p
        return op("linalg_vector_norm")(x, ord, dim, keepdim, dtype=dtype)
    if dtype is not None:
        x = x.to(dtype)
    if x._dtype.itemsize < 4:  # half types: svd in float32, the result cast back (as the CPU's kernel)
        x = x.to(_dtypes.float32)
    ndim = x.ndim
    dims = tuple(range(ndim)) if dim is None else tuple(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))
    rest = [d for d in range(ndim) if d not in dims]
    s = op("sum")(op("linalg_svdvals")(op("permute")(x, rest + list(dims))), -1)
    if keepdim:
        for d in sorted(dims):
            s = op("unsqueeze")(s, d)
    return s

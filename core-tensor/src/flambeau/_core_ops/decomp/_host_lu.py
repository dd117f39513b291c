"""LU with partial pivoting and triangular substitution in numpy (numpy.linalg has no LU, and
core-tensor may not use scipy): the host kernels of ``lu_factor``, ``lu``, ``lu_solve`` and
``solve_triangular``, and the LAPACK-style status codes (getrf's and potrf's ``info``) that the
other linalg decompositions' errors report.

Each works on a whole batch at once: the loops run over the columns (or rows) of one matrix,
every step vectorised over the batch, so a batch of small matrices costs what one does.
"""
from __future__ import annotations

import numpy as np


def _abs1(x: np.ndarray) -> np.ndarray:
    """LAPACK's pivot measure: ``|x|``, and ``|re| + |im|`` for complex (i?amax's cabs1)."""
    return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


def lu_factor(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """getrf over a batch ``(..., m, n)``: the compact LU (unit L below the diagonal, U on and
    above it), the pivots (1-based int32, row ``i`` swapped with ``pivots[i]`` in turn, as
    LAPACK and PyTorch give them) and ``info`` per matrix (the 1-based column of the first zero
    pivot, 0 when there is none; factorisation goes on past it, as getrf's does)."""
    *batch, m, n = A.shape
    k = min(m, n)
    lu = np.array(A.reshape((-1, m, n)), copy=True)
    count = lu.shape[0]
    pivots = np.empty((count, k), np.int32)
    info = np.zeros(count, np.int32)
    rows = np.arange(count)
    with np.errstate(all="ignore"):
        for j in range(k):
            p = j + np.argmax(_abs1(lu[:, j:, j]), axis=1)
            pivots[:, j] = p + 1
            moved = p != j
            if moved.any():
                r, q = rows[moved], p[moved]
                top = lu[r, j].copy()
                lu[r, j] = lu[r, q]
                lu[r, q] = top
            pivot = lu[:, j, j]
            zero = pivot == 0
            info[zero & (info == 0)] = j + 1
            # a zero pivot means the column below it is zero too: nothing to eliminate there
            scale = np.where(zero, 1, pivot)
            lu[:, j + 1:, j] /= scale[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(A.shape), pivots.reshape(tuple(batch) + (k,)), info.reshape(tuple(batch))


def permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """``perm`` with ``A[..., perm[i], :] == (L @ U)[..., i, :]``: the pivots' swaps applied in turn."""
    flat = pivots.reshape((-1, pivots.shape[-1])) - 1
    perm = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    return perm.reshape(pivots.shape[:-1] + (m,))


def unpack(lu: np.ndarray, pivots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P, L, U)`` with ``A = P @ L @ U`` from ``lu_factor``'s compact form."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1)
    idx = np.arange(k)
    lower[..., idx, idx] = 1
    upper = np.triu(lu[..., :k, :])
    perm = permutation(pivots, m)
    P = (np.arange(m)[:, None] == perm[..., None, :]).astype(lu.dtype)  # P[perm[i], i] = 1
    return P, lower, upper
    P = np.zeros(lu.shape[:-2] + (m, m), lu.dtype)
    cols = np.broadcast_to(np.arange(m), perm.shape)
    np.put_along_axis(P.reshape((-1, m * m)), (perm * m + cols).reshape((-1, m)), 1, axis=-1)
    return P, lower, upper


def substitute(T: np.ndarray, B: np.ndarray, lower: bool, unit: bool = False) -> np.ndarray:
    """``X`` with ``T @ X = B`` for triangular ``T`` (only its ``lower`` or upper triangle read;
    ``unit``: ones assumed on the diagonal), batches broadcast. A zero on the diagonal gives the
    infinities and NaNs of the substitution, as PyTorch's (no error)."""
    n = T.shape[-1]
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    X = np.zeros(batch + B.shape[-2:], dtype=np.result_type(T, B))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            done = slice(0, i) if lower else slice(i + 1, n)
            acc = B[..., i, :] - np.einsum("...j,...jk->...k", T[..., i, done], X[..., done, :])
            X[..., i, :] = acc if unit else acc / T[..., i, i][..., None]
    return X


def lu_solve(lu: np.ndarray, pivots: np.ndarray, B: np.ndarray, trans: str = "N") -> np.ndarray:
    """``X`` with ``op(A) @ X = B``, ``A = P L U`` given by ``lu_factor`` (square), ``op`` the
    identity (``"N"``), the transpose (``"T"``) or the conjugate transpose (``"H"``)."""
    m = lu.shape[-1]
    batch = np.broadcast_shapes(lu.shape[:-2], B.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    perm = np.broadcast_to(permutation(pivots, m), batch + (m,))
    B = np.broadcast_to(B, batch + B.shape[-2:])
    if trans == "N":  # L U X = P^T B
        y = substitute(lu, np.take_along_axis(B, perm[..., :, None], axis=-2), lower=True, unit=True)
        return substitute(lu, y, lower=False)
    # op(A) = U^T L^T P^T (conjugated for "H"): solve U^T y = B, L^T z = y, then X = P z
    t = np.swapaxes(lu, -1, -2)
    if trans == "H":
        t = t.conj()
    z = substitute(t, substitute(t, B, lower=True), lower=False, unit=True)
    X = np.empty_like(z)
    np.put_along_axis(X, np.broadcast_to(perm[..., :, None], z.shape), z, axis=-2)
    return X


def potrf_info(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky (lower) over a batch with potrf's status: the factor, and per matrix the order of
    the first leading minor that is not positive-definite (0: none). A failed matrix keeps the
    columns factored before that one and the input's lower triangle from it on (unblocked potrf's
    partial result)."""
    *batch, n, _ = A.shape
    a = np.tril(np.array(A.reshape((-1, n, n)), copy=True))
    info = np.zeros(a.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            live = info == 0
            d = a[:, j, j].real - np.einsum("bk,bk->b", a[:, j, :j], a[:, j, :j].conj()).real
            bad = live & ~(d > 0)  # NaN fails too
            info[bad] = j + 1
            live &= ~bad
            if not live.any():
                continue
            r = np.sqrt(np.where(live, d, 1))
            below = a[:, j + 1:, j] - np.einsum("bik,bk->bi", a[:, j + 1:, :j], a[:, j, :j].conj())
            a[live, j, j] = r[live]
            a[live, j + 1:, j] = (below / r[:, None])[live]
    return a.reshape(A.shape), info.reshape(tuple(batch))

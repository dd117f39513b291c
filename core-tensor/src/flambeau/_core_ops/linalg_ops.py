"""Declarations of ``flambeau.linalg``'s primitive ops: decompositions, solvers, determinants, norms.

Every op is named ``linalg_<function>`` and is reached through :mod:`flambeau.linalg`; the
functions written with other ops (``pinv``, ``matrix_rank``, ``multi_dot``...) are in
:mod:`._linalg_composites`. Each meta function checks its arguments with PyTorch's wording
before any work; errors that depend on values (a singular matrix) come from the kernels.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import DYNAMIC, OpDecl
from ..ops.meta import broadcast_shapes, fmt_shape, reduced_shape, reduction_dims, type_name, wrap_dim
from ._linalg_checks import (check_float, check_matrix, check_square, check_uplo, matrix_float, same_dtype,
                             square_float)
from . import _linalg_composites as C
from . import matrix_exp

_INT32 = _dtypes.int32


def _vector_norm_meta(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    op = "linalg.vector_norm"
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    check_float(op, input, low_precision=True)
    if dtype is not None:
        if dtype._category < input._dtype._category or (dtype._category == input._dtype._category
                                                         and dtype.itemsize < input._dtype.itemsize):
            raise RuntimeError(f"{op}: the dtype of the input ({type_name(input._dtype)}) should be convertible "
                               f"without narrowing to the specified dtype ({type_name(dtype)})")
    dims = reduction_dims(input, dim)
    if ord <= 0 and input._data.size == 0:
        shape = input._data.shape
        if dims is None or any(shape[d] == 0 for d in dims):
            raise RuntimeError(f"{op} cannot compute the {ord} norm on an empty tensor because the operation "
                               "does not have an identity")
    return reduced_shape(input._data.shape, dims, keepdim), (dtype or input._dtype).to_real()


def _batch(A: Tensor) -> tuple[int, ...]:
    return tuple(A._data.shape[:-2])


def _det_meta(A: Tensor) -> tuple:
    return _batch_of(square_float("linalg.det", A)), A._dtype


def _batch_of(shape: tuple) -> tuple:
    return shape[:-2]


def _slogdet_meta(A: Tensor) -> list:
    batch = _batch_of(square_float("linalg.slogdet", A))
    return [(batch, A._dtype), (batch, A._dtype.to_real())]


def _inv_meta(A: Tensor) -> tuple:
    return square_float("linalg.inv", A), A._dtype


def _inv_ex_meta(A: Tensor, check_errors: bool = False) -> list:
    shape = square_float("linalg.inv_ex", A)
    return [(shape, A._dtype), (shape[:-2], _INT32)]


def is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule for ``solve``: B is a (batch of) vector(s) when 1-D or one dim short of A with A's batch."""
    nb = B._data.ndim
    return nb == 1 or (nb == A._data.ndim - 1 and tuple(B._data.shape) == tuple(A._data.shape[:-1]))


def _incompatible(op: str, A: Tensor, B: tuple, left: bool) -> RuntimeError:
    eq = "AX = B" if left else "XA = B"
    n = A._data.shape[-1]
    return RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {B[0]}x{B[1]})")


def _solve_meta(A: Tensor, B: Tensor, left: bool = True) -> tuple:
    op = "linalg.solve"
    square_float(op, A)
    check_float(op, B)
    same_dtype(op, A, B)
    n = A._data.shape[-1]
    if left and is_vector_rhs(A, B):
        if B._data.shape[-1] != n:
            raise _incompatible(op, A, (B._data.shape[-1], 1), left)
        return broadcast_shapes(_batch(A), tuple(B._data.shape[:-1])) + (n,), A._dtype
    if B._data.ndim < 2:
        raise _incompatible(op, A, (B._data.shape[-1], 1), left)
    mat = tuple(B._data.shape[-2:])
    if (mat[0] if left else mat[1]) != n:
        raise _incompatible(op, A, mat, left)
    return broadcast_shapes(_batch(A), _batch(B)) + mat, A._dtype


def _solve_triangular_meta(A: Tensor, B: Tensor, upper: bool, left: bool = True, unitriangular: bool = False) -> tuple:
    op = "linalg.solve_triangular"
    square_float(op, A)
    check_matrix(op, B, "B")
    check_float(op, B)
    same_dtype(op, A, B)
    n, mat = A._data.shape[-1], tuple(B._data.shape[-2:])
    if (mat[0] if left else mat[1]) != n:
        raise _incompatible(op, A, mat, left)
    return broadcast_shapes(_batch(A), _batch(B)) + mat, A._dtype


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_meta(A: Tensor, B: Tensor, rcond: Any = None, driver: Any = None) -> None:
    op = "flambeau.linalg.lstsq"
    matrix_float("linalg.lstsq", A)
    check_float("linalg.lstsq", B)
    same_dtype("linalg.lstsq", A, B)
    if B._data.ndim < 1 or B._data.ndim < A._data.ndim - 1:
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = B._data.ndim == A._data.ndim - 1
    rows = B._data.shape[-1] if vector else B._data.shape[-2]
    if A._data.shape[-2] != rows:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    broadcast_shapes(_batch(A), tuple(B._data.shape[:-1]) if vector else _batch(B))


def _cholesky_meta(A: Tensor, upper: bool = False) -> tuple:
    return square_float("linalg.cholesky", A), A._dtype


def _cholesky_ex_meta(A: Tensor, upper: bool = False, check_errors: bool = False) -> list:
    shape = square_float("linalg.cholesky_ex", A)
    return [(shape, A._dtype), (shape[:-2], _INT32)]


def _qr_meta(A: Tensor, mode: str = "reduced") -> list:
    shape = matrix_float("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    *batch, m, n = shape
    k = min(m, n)
    batch = tuple(batch)
    if mode == "r":
        return [((0,), A._dtype), (batch + (k, n), A._dtype)]
    if mode == "complete":
        return [(batch + (m, m), A._dtype), (batch + (m, n), A._dtype)]
    return [(batch + (m, k), A._dtype), (batch + (k, n), A._dtype)]


def _pivot_check(op: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


def _lu_factor_meta(A: Tensor, pivot: bool = True) -> list:
    if A._data.ndim < 2:
        raise RuntimeError(f"flambeau.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{fmt_shape(A._data.shape)} instead")
    check_float("linalg.lu_factor", A)
    _pivot_check("linalg.lu_factor", pivot)
    *batch, m, n = A._data.shape
    return [(tuple(A._data.shape), A._dtype), (tuple(batch) + (min(m, n),), _INT32)]


def _lu_meta(A: Tensor, pivot: bool = True) -> list:
    *batch, m, n = matrix_float("linalg.lu", A)
    _pivot_check("linalg.lu", pivot)
    batch, k = tuple(batch), min(m, n)
    return [(batch + (m, m), A._dtype), (batch + (m, k), A._dtype), (batch + (k, n), A._dtype)]


def _lu_solve_meta(LU: Tensor, pivots: Tensor, B: Tensor, left: bool = True, adjoint: bool = False) -> tuple:
    op = "linalg.lu_solve"
    check_square(op, LU, "LU")
    check_float(op, LU)
    check_matrix(op, B, "B")
    same_dtype(op, LU, B, "LU", "B")
    if pivots._dtype is not _INT32:
        raise RuntimeError(f"{op}: pivots should be a Tensor of scalar type flambeau.int32")
    n, mat = LU._data.shape[-1], tuple(B._data.shape[-2:])
    if (mat[0] if left else mat[1]) != n:
        raise _incompatible(op, LU, mat, left)
    if tuple(pivots._data.shape) != _batch(LU) + (n,):
        raise RuntimeError(f"{op}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {fmt_shape(pivots._data.shape)} instead")
    return broadcast_shapes(_batch(LU), _batch(B)) + mat, LU._dtype


def _eig_meta(A: Tensor) -> list:
    shape = square_float("linalg.eig", A)
    c = A._dtype.to_complex()
    return [(shape[:-1], c), (shape, c)]


def _eigvals_meta(A: Tensor) -> tuple:
    shape = square_float("linalg.eigvals", A)
    return shape[:-1], A._dtype.to_complex()


def _eigh_meta(A: Tensor, UPLO: str = "L") -> list:
    shape = square_float("linalg.eigh", A)
    check_uplo(UPLO)
    return [(shape[:-1], A._dtype.to_real()), (shape, A._dtype)]


def _svd_meta(A: Tensor, full_matrices: bool = True, driver: Any = None) -> list:
    *batch, m, n = matrix_float("linalg.svd", A)
    _check_driver(driver)
    batch, k = tuple(batch), min(m, n)
    real = A._dtype.to_real()
    if full_matrices:
        return [(batch + (m, m), A._dtype), (batch + (k,), real), (batch + (n, n), A._dtype)]
    return [(batch + (m, k), A._dtype), (batch + (k,), real), (batch + (k, n), A._dtype)]


def _check_driver(driver: Any) -> None:
    if driver is not None:
        raise RuntimeError("flambeau.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def _svdvals_meta(A: Tensor, driver: Any = None) -> tuple:
    *batch, m, n = matrix_float("linalg.svdvals", A)
    _check_driver(driver)
    return tuple(batch) + (min(m, n),), A._dtype.to_real()


def _cross_meta(input: Tensor, other: Tensor, dim: int = -1) -> tuple:
    op = "linalg.cross"
    if input._data.ndim != other._data.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._dtype)} but found {type_name(other._dtype)}")
    shape = broadcast_shapes(input._data.shape, other._data.shape)
    d = wrap_dim(dim, len(shape))
    if input._data.shape[d] != 3 or other._data.shape[d] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. Got {input._data.shape[d]} and "
                           f"{other._data.shape[d]}")
    if input._dtype is _dtypes.bool:
        raise RuntimeError("\"linalg_cross\" not implemented for 'Bool'")
    return shape, input._dtype


def _decl(name: str, sig: str, meta: Any, doc: str, **kw: Any) -> OpDecl:
    return OpDecl(name, sig, meta, method=False, export=False, doc=doc, **kw)


def declarations() -> list[OpDecl]:
    return [
        _decl("linalg_vector_norm", "(input: Tensor, ord=2, dim=None, keepdim=False, *, dtype=None)",
              _vector_norm_meta, "The vector ``ord``-norm of ``input`` over ``dim`` (all elements by default)."),
        _decl("linalg_det", "(A: Tensor)", _det_meta, "The determinant of each square matrix."),
        _decl("linalg_slogdet", "(A: Tensor)", _slogdet_meta, "The sign and log absolute value of the determinant.",
              output_names=("sign", "logabsdet")),
        _decl("linalg_inv", "(A: Tensor)", _inv_meta, "The inverse of each square matrix."),
        _decl("linalg_inv_ex", "(A: Tensor, *, check_errors=False)", _inv_ex_meta,
              "The inverse and a LAPACK status code per matrix (0: success).", output_names=("inverse", "info")),
        _decl("linalg_solve", "(A: Tensor, B: Tensor, *, left=True)", _solve_meta,
              "The solution of ``AX = B`` (or ``XA = B`` with ``left=False``)."),
        _decl("linalg_solve_triangular",
              "(A: Tensor, B: Tensor, *, upper, left=True, unitriangular=False)", _solve_triangular_meta,
              "The solution of a triangular system ``AX = B``."),
        _decl("linalg_lstsq", "(A: Tensor, B: Tensor, rcond=None, *, driver=None)", _lstsq_meta,
              "The least-squares solution of ``AX = B``.", kind=DYNAMIC,
              output_names=("solution", "residuals", "rank", "singular_values")),
        _decl("linalg_cholesky", "(A: Tensor, *, upper=False)", _cholesky_meta,
              "The Cholesky factor of each Hermitian positive-definite matrix."),
        _decl("linalg_cholesky_ex", "(A: Tensor, *, upper=False, check_errors=False)", _cholesky_ex_meta,
              "The Cholesky factor and a LAPACK status code per matrix.", output_names=("L", "info")),
        _decl("linalg_qr", "(A: Tensor, mode='reduced')", _qr_meta, "The QR decomposition.",
              output_names=("Q", "R")),
        _decl("linalg_lu_factor", "(A: Tensor, *, pivot=True)", _lu_factor_meta,
              "The compact LU factorisation and its pivots (1-based, int32).", output_names=("LU", "pivots")),
        _decl("linalg_lu", "(A: Tensor, *, pivot=True)", _lu_meta, "The LU decomposition ``A = P L U``.",
              output_names=("P", "L", "U")),
        _decl("linalg_lu_solve", "(LU: Tensor, pivots: Tensor, B: Tensor, *, left=True, adjoint=False)",
              _lu_solve_meta, "The solution of ``AX = B`` from ``lu_factor``'s output."),
        _decl("linalg_eig", "(A: Tensor)", _eig_meta, "The eigenvalues and eigenvectors of a general matrix.",
              output_names=("eigenvalues", "eigenvectors")),
        _decl("linalg_eigvals", "(A: Tensor)", _eigvals_meta, "The eigenvalues of a general matrix."),
        _decl("linalg_eigh", "(A: Tensor, UPLO='L')", _eigh_meta,
              "The eigenvalues (ascending) and eigenvectors of a Hermitian matrix.",
              output_names=("eigenvalues", "eigenvectors")),
        _decl("linalg_svd", "(A: Tensor, full_matrices=True, *, driver=None)", _svd_meta,
              "The singular value decomposition ``A = U diag(S) Vh``.", output_names=("U", "S", "Vh")),
        _decl("linalg_svdvals", "(A: Tensor, *, driver=None)", _svdvals_meta, "The singular values, descending."),
        _decl("linalg_cross", "(input: Tensor, other: Tensor, *, dim=-1)", _cross_meta,
              "The cross product of 3-vectors along ``dim``."),
        *C.declarations(),
        *matrix_exp.declarations(),
    ]

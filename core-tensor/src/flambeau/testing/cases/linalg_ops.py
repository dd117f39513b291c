"""Cases for ``flambeau.linalg``: norms, determinants, inverses, solvers, decompositions, products.

Inputs are small random matrices (well conditioned enough at these sizes) or fixed ones where the op
needs structure (positive-definite for cholesky). Factorisations whose factors are defined only up
to signs or phases (qr, svd, eig, lu) are compared with numpy run in the input's own precision,
which makes the same choices as LAPACK; their reconstruction is checked in the unit tests.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ...linalg import LinAlgError

FLOATS = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": (2e-4, 2e-4), "complex64": (2e-4, 2e-4), "float64": (1e-7, 1e-8), "complex128": (1e-7, 1e-8)}


def _same(sample: Sample) -> str:
    return sample.args[0].dtype


def _real(sample: Sample) -> str:
    return P.to_real(_same(sample))


def _cplx(sample: Sample) -> str:
    return P.to_complex(_same(sample))


def _square(dtype: str, empty: bool = True) -> list[Sample]:
    out = [Sample((Arg((3, 3), dtype),)), Sample((Arg((2, 4, 4), dtype, "transposed"),)),
           Sample((Arg((1, 2, 2, 2), dtype),))]
    if empty:
        out.append(Sample((Arg((2, 0, 0), dtype),)))
    return out


def _rect(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 3), dtype),)), Sample((Arg((4, 2), dtype, "transposed"),)),
            Sample((Arg((2, 2, 5), dtype),))]


def _pd(dtype: str, batch: int = 2, n: int = 3) -> Arg:
    rng = np.random.default_rng(7)
    m = rng.uniform(-1, 1, (batch, n, n))
    if P.category(dtype) == 3:
        m = m + 1j * rng.uniform(-1, 1, (batch, n, n))
    return Arg((batch, n, n), dtype, values=m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n))


def _f(shape, dtype="float32", values=None):
    return Arg(shape, dtype, values=values)


def _errs(op: str, square: bool = True):
    def errors():
        out = [ErrorCase((_f((2, 2), "int64"),), RuntimeError,
                         f"{op}: Expected a floating point or complex tensor as input. Got Long"),
               ErrorCase((_f((3,)),), RuntimeError, f"{op}: The input tensor A must have at least 2 dimensions.")]
        if square:
            out.append(ErrorCase((_f((2, 3)),), RuntimeError,
                                 f"{op}: A must be batches of square matrices, but they are 2 by 3 matrices"))
        return out
    return errors


def _ref_vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):
    axes = dim if dim is None or isinstance(dim, int) else tuple(dim)
    a = np.abs(x)
    if ord == math.inf:
        return np.max(a, axis=axes, keepdims=keepdim, initial=0)
    if ord == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdim).astype(np.float64)
    return np.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1 / ord)


def _vector_norm_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype),)), Sample((Arg((3, 4), dtype, "transposed"), 1, 1)),
            Sample((Arg((2, 3, 4), dtype, "sliced"), math.inf, (0, 2), True)),
            Sample((Arg((5,), dtype), 3)), Sample((Arg((5,), dtype), 0)), Sample((Arg((0, 3), dtype), 2, 0)),
            Sample((Arg((), dtype), -1))]


def _matrix_norm_ref(A, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return np.linalg.norm(A, ord, axis=tuple(dim), keepdims=keepdim)


def _matrix_norm_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype),)), Sample((Arg((2, 3, 3), dtype, "transposed"), "nuc")),
            Sample((Arg((3, 4), dtype), math.inf)), Sample((Arg((3, 4), dtype), -1, (0, 1), True)),
            Sample((Arg((2, 3, 4), dtype), 2, (2, 1))), Sample((Arg((3, 3), dtype), -2))]


def _norm_ref(A, ord=None, dim=None, keepdim=False, dtype=None):
    if dim is None and ord is None:
        return np.linalg.norm(A.reshape(-1), keepdims=False).reshape((1,) * A.ndim if keepdim else ())
    return np.linalg.norm(A, ord, axis=dim if dim is None or isinstance(dim, int) else tuple(dim), keepdims=keepdim)


def _norm_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((2, 3, 4), dtype),)), Sample((Arg((3, 4), dtype), "fro")), Sample((Arg((5,), dtype), 1)),
            Sample((Arg((3, 4), dtype, "transposed"), math.inf, 1)), Sample((Arg((2, 3, 4), dtype), "nuc", (1, 2)))]


def _solve_ref(A, B, left=True):
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
    if vector:
        return np.linalg.solve(A, B[..., None])[..., 0]
    if left:
        return np.linalg.solve(A, B)
    return np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)


def _solve_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 3), dtype), Arg((3, 2), dtype))), Sample((Arg((3, 3), dtype), Arg((3,), dtype))),
            Sample((Arg((2, 3, 3), dtype, "transposed"), Arg((2, 3), dtype))),
            Sample((Arg((2, 1, 3, 3), dtype), Arg((4, 3, 1), dtype, "sliced"))),
            Sample((Arg((3, 3), dtype), Arg((2, 3), dtype)), {"left": False})]


def _solve_tri_ref(A, B, upper, left=True, unitriangular=False):
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        idx = np.arange(A.shape[-1])
        T[..., idx, idx] = 1
    return _solve_ref(T, B, left)


def _solve_tri_samples(dtype: str) -> list[Sample]:
    strong = {"low": 1.0, "high": 3.0}
    return [Sample((Arg((3, 3), dtype, **strong), Arg((3, 2), dtype)), {"upper": True}),
            Sample((Arg((2, 3, 3), dtype, "transposed", **strong), Arg((3, 4), dtype)), {"upper": False}),
            Sample((Arg((3, 3), dtype, **strong), Arg((2, 3), dtype)), {"upper": True, "left": False}),
            Sample((Arg((3, 3), dtype, **strong), Arg((3, 1), dtype)), {"upper": False, "unitriangular": True})]


def _lstsq_ref(A, B, rcond=None, driver=None):
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    batch = np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    A2 = np.broadcast_to(A, batch + A.shape[-2:]).reshape((-1,) + A.shape[-2:])
    B2 = np.broadcast_to(Bm, batch + Bm.shape[-2:]).reshape((-1,) + Bm.shape[-2:])
    sols, ranks = [], []
    for a, b in zip(A2, B2):
        x, _, r, _ = np.linalg.lstsq(a, b, rcond=None)
        sols.append(x)
        ranks.append(r)
    sol = np.array(sols).reshape(batch + (A.shape[-1], Bm.shape[-1]))
    return (sol[..., 0] if vector else sol), np.empty(0), np.array(ranks, dtype=np.int64).reshape(batch), np.empty(0)


def _lstsq_samples(dtype: str) -> list[Sample]:
    # which outputs are filled depends on the ranks found: a dynamic op, with no meta kernel
    dyn = {"data_dependent": True}
    return [Sample((Arg((5, 3), dtype), Arg((5, 2), dtype)), **dyn),
            Sample((Arg((2, 4, 2), dtype), Arg((2, 4, 1), dtype)), **dyn),
            Sample((Arg((4, 3), dtype, "transposed"), Arg((4,), dtype)), **dyn)]


def _lstsq_dtypes(sample: Sample) -> tuple:
    return _same(sample), _real(sample), "int64", _real(sample)


def _chol_samples(dtype: str) -> list[Sample]:
    return [Sample((_pd(dtype),)), Sample((_pd(dtype, 1, 4),), {"upper": True})]


def _chol_ref(A, upper=False):
    L = np.linalg.cholesky(A)
    return np.conj(np.swapaxes(L, -1, -2)) if upper else L


def _qr_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((4, 3), dtype),)), Sample((Arg((2, 3, 4), dtype, "transposed"), "complete")),
            Sample((Arg((3, 3), dtype), "r"))]


def _qr_ref(A, mode="reduced"):
    if mode == "r":
        return np.empty(0, A.dtype), np.linalg.qr(A, mode="r")
    return np.linalg.qr(A, mode=mode)


def _lu_factor_ref(A, pivot=True):
    lu, piv = sla.lu_factor(A)
    return lu, (piv + 1).astype(np.int32)


def _lu_ref(A, pivot=True):
    return sla.lu(A)


def _lu_solve_samples(dtype: str) -> list[Sample]:
    rng = np.random.default_rng(3)
    out = []
    for kw, bshape in (({}, (3, 2)), ({"adjoint": True}, (3, 1)), ({"left": False}, (2, 3))):
        a = rng.uniform(-2, 2, (2, 3, 3)) + 3 * np.eye(3)
        lu, piv = sla.lu_factor(a)
        out.append(Sample((Arg((2, 3, 3), dtype, values=lu), Arg((2, 3), "int32", values=piv + 1),
                           Arg(bshape, dtype)), kw))
    return out


def _lu_solve_ref(LU, pivots, B, left=True, adjoint=False):
    n = LU.shape[-1]
    L = np.tril(LU, -1) + np.eye(n)
    U = np.triu(LU)
    res = []
    for _lu_m, l_m, u_m, piv in zip(LU, L, U, pivots):
        perm = np.arange(n)
        for i, p in enumerate(piv - 1):
            perm[[i, p]] = perm[[p, i]]
        P = np.eye(n)[:, perm]
        A = P @ l_m @ u_m
        A = np.conj(A.T) if adjoint else A
        res.append(np.linalg.solve(A, B) if left else np.linalg.solve(A.T, B.T).T)
    return np.array(res)


def _eig_samples(dtype: str) -> list[Sample]:
    tri = np.triu(np.arange(1.0, 10.0).reshape(3, 3)) + np.diag([0.0, 3.0, 7.0])
    return [Sample((Arg((3, 3), dtype, values=tri),)), Sample((Arg((2, 0, 0), dtype),))]


def _eig_ref(A):
    w, v = np.linalg.eig(A)
    return w.astype(np.result_type(w, np.complex64)), v.astype(np.result_type(v, np.complex64))


def _eigh_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 3), dtype),)), Sample((Arg((2, 4, 4), dtype, "transposed"), "U"))]


def _svd_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 3), dtype),)), Sample((Arg((2, 4, 3), dtype, "transposed"), False)),
            Sample((Arg((2, 5), dtype),))]


def _cross_samples(dtype: str) -> list[Sample]:
    small = {"low": -3, "high": 3}
    return [Sample((Arg((4, 3), dtype, **small), Arg((4, 3), dtype, "transposed", **small))),
            Sample((Arg((3, 2), dtype, **small), Arg((3, 1), dtype, **small)), {"dim": 0}),
            Sample((Arg((2, 1, 3), dtype, **small), Arg((1, 5, 3), dtype, **small)))]


def _power_samples(dtype: str) -> list[Sample]:
    small = {"low": -2, "high": 2}
    out = [Sample((Arg((3, 3), dtype, **small), 0)), Sample((Arg((2, 3, 3), dtype, "transposed", **small), 3)),
           Sample((Arg((3, 3), dtype, **small), 1))]
    if P.category(dtype) >= 2:
        out.append(Sample((Arg((2, 2, 2), dtype, low=1, high=3), -2)))
    return out


def _power_ref(A, n):
    if n < 0:
        return np.linalg.matrix_power(np.linalg.inv(A), -n)
    return np.linalg.matrix_power(A, n)


def _multi_dot_samples(dtype: str) -> list[Sample]:
    return [Sample(([Arg((3,), dtype), Arg((3, 4), dtype), Arg((4, 2), dtype, "transposed"), Arg((2,), dtype)],)),
            Sample(([Arg((2, 5), dtype), Arg((5, 3), dtype)],))]


def _multi_dot_ref(tensors):
    return np.linalg.multi_dot(list(tensors))


def _vecdot_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype), Arg((4,), dtype))), Sample((Arg((2, 3), dtype, "transposed"),
                                                                     Arg((2, 3), dtype)), {"dim": 0})]


def _rank_samples(dtype: str) -> list[Sample]:
    low = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5, 2.0])
    return [Sample((Arg((3, 4), dtype, values=low),)), Sample((Arg((2, 3, 3), dtype),)),
            Sample((Arg((3, 3), dtype, values=low[:, :3] + low[:, :3].T),), {"hermitian": True})]


def _rank_ref(A, atol=None, rtol=None, hermitian=False):
    return np.linalg.matrix_rank(A, hermitian=hermitian).astype(np.int64)


def _pinv_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype),)), Sample((Arg((2, 3, 3), dtype, "transposed"),)),
            Sample((_pd(dtype),), {"hermitian": True})]


def _pinv_ref(A, atol=None, rtol=None, hermitian=False):
    return np.linalg.pinv(A, hermitian=hermitian)


def _singular(op: str, call: str | None = None):
    return ErrorCase((Arg((2, 2), "float32", values=[[1.0, 2.0], [2.0, 4.0]]),), LinAlgError,
                     f"{op}: The diagonal element 2 is zero, the inversion could not be completed because the input "
                     "matrix is singular.", data_dependent=True)


def cases() -> list[OpCase]:
    exact_lapack = {"upcast": False}
    return [
        OpCase("linalg_vector_norm", FLOATS, _vector_norm_samples, _ref_vector_norm, _real, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2,), "int64"),), RuntimeError,
                                         "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                                         "Got Long"),
                               ErrorCase((_f((2,)), "fro"), TypeError, "argument 'ord' must be Number, not str")]),
        OpCase("linalg_matrix_norm", FLOATS, _matrix_norm_samples, _matrix_norm_ref, _real, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2)), 3), RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
                               ErrorCase((_f((2,)),), RuntimeError,
                                         "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")]),
        OpCase("linalg_norm", FLOATS, _norm_samples, _norm_ref, _real, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2, 2)), 2), RuntimeError, "the input must be 1D or 2D. Got 3D.")]),
        OpCase("linalg_det", FLOATS, _square, np.linalg.det, _same, tolerances=TOL, errors=_errs("linalg.det")),
        OpCase("linalg_slogdet", FLOATS, _square, lambda A: tuple(np.linalg.slogdet(A)), lambda s: (_same(s), _real(s)),
               tolerances=TOL, errors=_errs("linalg.slogdet")),
        OpCase("linalg_inv", FLOATS, _square, np.linalg.inv, _same, tolerances=TOL,
               errors=lambda: [*_errs("linalg.inv")(), _singular("linalg.inv")]),
        OpCase("linalg_inv_ex", FLOATS, _square,
               lambda A, check_errors=False: (np.linalg.inv(A), np.zeros(A.shape[:-2], np.int32)),
               lambda s: (_same(s), "int32"), tolerances=TOL, errors=_errs("linalg.inv_ex")),
        OpCase("linalg_solve", FLOATS, _solve_samples, _solve_ref, _same, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2)), _f((3, 1))), RuntimeError,
                                         "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 "
                                         "and 3x1)"),
                               ErrorCase((_f((2, 2)), _f((2, 1), "float64")), RuntimeError,
                                         "linalg.solve: Expected A and B to have the same dtype, but found A of type "
                                         "Float and B of type Double instead"),
                               ErrorCase((_f((2, 2), values=[[1.0, 2.0], [2.0, 4.0]]), _f((2, 1))), LinAlgError,
                                         "The solver failed because the input matrix is singular.",
                                         data_dependent=True)]),
        OpCase("linalg_solve_triangular", FLOATS, _solve_tri_samples, _solve_tri_ref, _same, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2)), _f((2,))), RuntimeError,
                                         "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.",
                                         {"upper": True})]),
        OpCase("linalg_lstsq", FLOATS, _lstsq_samples, _lstsq_ref, _lstsq_dtypes, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((3, 2)), _f((2, 1))), RuntimeError,
                                         "flambeau.linalg.lstsq: input.size(-2) should match other.size(-2)",
                                         data_dependent=True)]),  # a dynamic op: no meta kernel
        OpCase("linalg_cholesky", FLOATS, _chol_samples, _chol_ref, _same, tolerances=TOL,
               errors=lambda: [*_errs("linalg.cholesky")(),
                               ErrorCase((_f((2, 2), values=[[1.0, 2.0], [2.0, 1.0]]),), LinAlgError,
                                         "linalg.cholesky: The factorization could not be completed because the input "
                                         "is not positive-definite (the leading minor of order 2 is not "
                                         "positive-definite).", data_dependent=True)]),
        OpCase("linalg_cholesky_ex", FLOATS, _chol_samples,
               lambda A, upper=False, check_errors=False: (_chol_ref(A, upper), np.zeros(A.shape[:-2], np.int32)),
               lambda s: (_same(s), "int32"), tolerances=TOL, errors=_errs("linalg.cholesky_ex")),
        OpCase("linalg_qr", FLOATS, _qr_samples, _qr_ref, lambda s: (_same(s), _same(s)), tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2)), "bad"), RuntimeError, "qr received unrecognized mode 'bad'")],
               **exact_lapack),
        OpCase("linalg_lu_factor", FLOATS, _rect, _lu_factor_ref, lambda s: (_same(s), "int32"), tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2,)),), RuntimeError, "Expected tensor with 2 or more dimensions."),
                               ErrorCase((_f((2, 2)),), RuntimeError, "LU without pivoting is not implemented on the "
                                         "CPU", {"pivot": False})], **exact_lapack),
        OpCase("linalg_lu", FLOATS, _rect, _lu_ref, lambda s: (_same(s),) * 3, tolerances=TOL,
               errors=_errs("linalg.lu", square=False), **exact_lapack),
        OpCase("linalg_lu_solve", FLOATS, _lu_solve_samples, _lu_solve_ref, lambda s: s.args[0].dtype, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((3, 3)), _f((3,), "int64"), _f((3, 1))), RuntimeError,
                                         "linalg.lu_solve: pivots should be a Tensor of scalar type flambeau.int32")]),
        OpCase("linalg_eig", FLOATS, _eig_samples, _eig_ref, lambda s: (_cplx(s), _cplx(s)), tolerances=TOL,
               errors=_errs("linalg.eig"), **exact_lapack),
        OpCase("linalg_eigvals", FLOATS, _eig_samples, lambda A: _eig_ref(A)[0], _cplx, tolerances=TOL,
               errors=_errs("linalg.eigvals")),
        OpCase("linalg_eigh", FLOATS, _eigh_samples, lambda A, UPLO="L": tuple(np.linalg.eigh(A, UPLO)),
               lambda s: (_real(s), _same(s)), tolerances=TOL,
               errors=lambda: [*_errs("linalg.eigh")(),
                               ErrorCase((_f((2, 2)), "X"), RuntimeError,
                                         "Expected UPLO argument to be 'L' or 'U', but got X")], **exact_lapack),
        OpCase("linalg_eigvalsh", FLOATS, _eigh_samples, lambda A, UPLO="L": np.linalg.eigvalsh(A, UPLO), _real,
               tolerances=TOL, errors=_errs("linalg.eigvalsh")),
        OpCase("linalg_svd", FLOATS, _svd_samples,
               lambda A, full_matrices=True, driver=None: tuple(np.linalg.svd(A, full_matrices)),
               lambda s: (_same(s), _real(s), _same(s)), tolerances=TOL, errors=_errs("linalg.svd", square=False),
               **exact_lapack),
        OpCase("linalg_svdvals", FLOATS, _rect, lambda A, driver=None: np.linalg.svd(A, compute_uv=False), _real,
               tolerances=TOL, errors=_errs("linalg.svdvals", square=False)),
        OpCase("linalg_pinv", FLOATS, _pinv_samples, _pinv_ref, _same, tolerances=TOL),
        OpCase("linalg_matrix_rank", FLOATS, _rank_samples, _rank_ref, lambda s: "int64"),
        OpCase("linalg_cross", FLOATS + ("int64",), _cross_samples,
               lambda a, b, dim=-1: np.cross(*np.broadcast_arrays(a, b), axis=dim), _same, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 2)), _f((2, 2))), RuntimeError,
                                         "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2")]),
        OpCase("matrix_power", FLOATS + ("int64",), _power_samples, _power_ref, _same, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((2, 3)), 2), RuntimeError,
                                         "linalg.matrix_power: A must be batches of square matrices, but they are 2 "
                                         "by 3 matrices")]),
        OpCase("linalg_multi_dot", FLOATS, _multi_dot_samples, _multi_dot_ref, lambda s: s.args[0][0].dtype,
               tolerances=TOL,
               errors=lambda: [ErrorCase(([_f((2, 2))],), RuntimeError, "multi_dot(): expected at least 2 tensors but "
                                                                         "got 1"),
                               ErrorCase(([_f((2, 3)), _f((2, 2))],), RuntimeError,
                                         "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [2, 2] cannot be "
                                         "multiplied")]),
        OpCase("linalg_vecdot", FLOATS, _vecdot_samples, lambda x, y, dim=-1: np.sum(np.conj(x) * y, axis=dim),
               _same, tolerances=TOL,
               errors=lambda: [ErrorCase((_f((3,), "float64"), _f((3,))), RuntimeError,
                                         "linalg.vecdot: Expected x and y to have the same dtype")]),
    ]

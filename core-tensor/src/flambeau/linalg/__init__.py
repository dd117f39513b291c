"""``flambeau.linalg``: linear algebra with the names, arguments and results of ``torch.linalg``.

Every function works on batches of matrices (any leading dims), in float32, float64, complex64 and
complex128; several outputs come back as named tuples (``flambeau.return_types.linalg_*``). A
function whose input is singular or not positive-definite where it must not be raises
:class:`LinAlgError` (a ``RuntimeError``), naming the failing matrix.

Example::

    >>> import flambeau as fb
    >>> A = fb.tensor([[4.0, 1.0], [1.0, 3.0]])
    >>> fb.linalg.solve(A, fb.tensor([1.0, 2.0]))
    tensor([0.0909, 0.6364])
"""
from __future__ import annotations

from typing import Any, Sequence

from .._core_ops._linalg_checks import LinAlgError
from .._tensor import Tensor
from ..ops._registry import FUNCTIONS

__all__ = [
    "LinAlgError", "norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "inv_ex", "pinv", "solve",
    "solve_triangular", "lstsq", "cholesky", "cholesky_ex", "qr", "lu_factor", "lu", "lu_solve", "eig", "eigh",
    "eigvals", "eigvalsh", "svd", "svdvals", "matrix_rank", "multi_dot", "cross", "matrix_power", "matrix_exp",
    "matmul", "vecdot", "diagonal",
]

_Out = Any  # a Tensor, or a tuple of them for several outputs


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: _Out = None) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (every element when ``dim`` is None).

    Args:
        x: a float or complex tensor.
        ord: ``p`` for ``sum(|x|**p)**(1/p)``; ``inf``/``-inf`` for the max/min of ``|x|``; 0 counts non-zeros.
        dim: an int or a tuple of ints.
        keepdim: keep the reduced dims with size 1.
        dtype: compute in this dtype (the result is its real counterpart).

    Shape:
        ``x``'s shape without ``dim`` (or with 1 there when ``keepdim``).

    Example::

        >>> fb.linalg.vector_norm(fb.tensor([3.0, 4.0]))
        tensor(5.)
    """
    return FUNCTIONS["linalg_vector_norm"](x, ord, dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None,
                out: _Out = None) -> Tensor:
    """A matrix norm of each matrix over the two dims ``dim``.

    Args:
        A: a tensor with at least two dims.
        ord: ``'fro'`` (Frobenius), ``'nuc'`` (nuclear), ``inf``/``-inf`` (max/min row sum of ``|A|``),
            ``1``/``-1`` (max/min column sum), ``2``/``-2`` (largest/smallest singular value).
        dim: the two dims holding the matrices.
        keepdim: keep them with size 1.
        dtype: compute in this dtype.

    Example::

        >>> fb.linalg.matrix_norm(fb.eye(3), "nuc")
        tensor(3.)
    """
    return FUNCTIONS["linalg_matrix_norm"](A, ord, dim, keepdim, dtype=dtype, out=out)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: _Out = None) -> Tensor:
    """A vector norm or a matrix norm, chosen as ``torch.linalg.norm`` chooses.

    With ``dim`` an int (or ``A`` 1-D) it is :func:`vector_norm`; with ``dim`` a 2-tuple (or ``A``
    2-D and ``ord`` given) it is :func:`matrix_norm`; with neither ``ord`` nor ``dim``, the 2-norm
    of all elements.

    Example::

        >>> fb.linalg.norm(fb.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.4772)
    """
    return FUNCTIONS["linalg_norm"](A, ord, dim, keepdim, dtype=dtype, out=out)


def det(A: Tensor, *, out: _Out = None) -> Tensor:
    """The determinant of each square matrix.

    Shape:
        ``A``: ``(*, n, n)``; result: ``(*)``.

    Example::

        >>> fb.linalg.det(fb.tensor([[2.0, 1.0], [1.0, 3.0]]))
        tensor(5.)
    """
    return FUNCTIONS["linalg_det"](A, out=out)


def slogdet(A: Tensor, *, out: _Out = None) -> Any:
    """The sign (or complex phase) and the log of the absolute value of each determinant.

    Returns:
        a named tuple ``(sign, logabsdet)``; ``det = sign * exp(logabsdet)``.

    Example::

        >>> fb.linalg.slogdet(fb.tensor([[-2.0, 0.0], [0.0, 3.0]])).sign
        tensor(-1.)
    """
    return FUNCTIONS["linalg_slogdet"](A, out=out)


def inv(A: Tensor, *, out: _Out = None) -> Tensor:
    """The inverse of each square matrix; :class:`LinAlgError` if one is singular.

    Example::

        >>> fb.linalg.inv(fb.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return FUNCTIONS["linalg_inv"](A, out=out)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: _Out = None) -> Any:
    """The inverse and ``info`` (int32, 0 where it succeeded, else the index of the zero pivot).

    Raises only when ``check_errors`` is True.

    Example::

        >>> fb.linalg.inv_ex(fb.zeros(2, 2)).info
        tensor(1, dtype=flambeau.int32)
    """
    return FUNCTIONS["linalg_inv_ex"](A, check_errors=check_errors, out=out)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, out: _Out = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD (singular values at or below
    ``max(atol, rtol * largest)`` count as zero); ``hermitian=True`` uses the eigendecomposition.

    Shape:
        ``A``: ``(*, m, n)``; result: ``(*, n, m)``.

    Example::

        >>> fb.linalg.pinv(fb.tensor([[1.0, 0.0], [0.0, 0.0]]))
        tensor([[1., 0.],
                [0., 0.]])
    """
    return FUNCTIONS["linalg_pinv"](A, atol=atol, rtol=rtol, hermitian=hermitian, out=out)


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: _Out = None) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` when ``left`` is False).

    ``B`` is a batch of vectors when it is 1-D, or has one dim fewer than ``A`` and ``A``'s
    leading shape; batch dims broadcast.

    Shape:
        ``A``: ``(*, n, n)``; ``B``: ``(*, n, k)`` or ``(*, n)``.

    Example::

        >>> fb.linalg.solve(fb.eye(2) * 2, fb.tensor([2.0, 4.0]))
        tensor([1., 2.])
    """
    return FUNCTIONS["linalg_solve"](A, B, left=left, out=out)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out: _Out = None) -> Tensor:
    """The solution of ``A X = B`` for triangular ``A`` (only the ``upper`` or lower triangle is read;
    ``unitriangular``: its diagonal is taken to be ones).

    Example::

        >>> fb.linalg.solve_triangular(fb.tensor([[2.0, 1.0], [0.0, 1.0]]), fb.tensor([[3.0], [1.0]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    return FUNCTIONS["linalg_solve_triangular"](A, B, upper=upper, left=left, unitriangular=unitriangular, out=out)


def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:
    """The least-squares solution of ``A X = B``.

    Returns:
        a named tuple ``(solution, residuals, rank, singular_values)``. As on PyTorch's CPU,
        ``driver`` ('gelsy' by default, 'gels', 'gelsd', 'gelss') decides which of the last three are
        computed (the others are empty); residuals are given when ``m > n`` and every matrix has full rank.

    Example::

        >>> fb.linalg.lstsq(fb.tensor([[1.0], [1.0]]), fb.tensor([[1.0], [3.0]])).solution
        tensor([[2.]])
    """
    return FUNCTIONS["linalg_lstsq"](A, B, rcond, driver=driver)


def cholesky(A: Tensor, *, upper: bool = False, out: _Out = None) -> Tensor:
    """The Cholesky factor ``L`` (``A = L L^H``) of each Hermitian positive-definite matrix (or ``U = L^H``).

    Example::

        >>> fb.linalg.cholesky(fb.tensor([[4.0, 2.0], [2.0, 2.0]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    return FUNCTIONS["linalg_cholesky"](A, upper=upper, out=out)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: _Out = None) -> Any:
    """The Cholesky factor and ``info`` (0, or the order of the leading minor that is not positive-definite).

    Example::

        >>> fb.linalg.cholesky_ex(-fb.eye(2)).info
        tensor(1, dtype=flambeau.int32)
    """
    return FUNCTIONS["linalg_cholesky_ex"](A, upper=upper, check_errors=check_errors, out=out)


def qr(A: Tensor, mode: str = "reduced", *, out: _Out = None) -> Any:
    """The QR decomposition ``A = Q R``.

    Args:
        mode: ``'reduced'`` (``Q``: ``(*, m, k)``), ``'complete'`` (``Q``: ``(*, m, m)``) or ``'r'``
            (``R`` only; ``Q`` is empty), with ``k = min(m, n)``.

    Example::

        >>> Q, R = fb.linalg.qr(fb.tensor([[3.0, 1.0], [4.0, 2.0]]))
    """
    return FUNCTIONS["linalg_qr"](A, mode, out=out)


def lu_factor(A: Tensor, *, pivot: bool = True, out: _Out = None) -> Any:
    """The compact LU factorisation ``(LU, pivots)`` (pivots are 1-based, int32), for :func:`lu_solve`.

    Example::

        >>> LU, pivots = fb.linalg.lu_factor(fb.tensor([[1.0, 2.0], [3.0, 4.0]]))
    """
    return FUNCTIONS["linalg_lu_factor"](A, pivot=pivot, out=out)


def lu(A: Tensor, *, pivot: bool = True, out: _Out = None) -> Any:
    """The LU decomposition with partial pivoting, ``A = P L U``, as a named tuple ``(P, L, U)``.

    Example::

        >>> P, L, U = fb.linalg.lu(fb.tensor([[1.0, 2.0], [3.0, 4.0]]))
    """
    return FUNCTIONS["linalg_lu"](A, pivot=pivot, out=out)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: _Out = None) -> Tensor:
    """The solution of ``A X = B`` from :func:`lu_factor`'s output (``adjoint``: of ``A^H X = B``;
    ``left=False``: of ``X A = B``).

    Example::

        >>> A = fb.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> fb.linalg.lu_solve(*fb.linalg.lu_factor(A), fb.tensor([[5.0], [11.0]]))
        tensor([[1.],
                [2.]])
    """
    return FUNCTIONS["linalg_lu_solve"](LU, pivots, B, left=left, adjoint=adjoint, out=out)


def eig(A: Tensor, *, out: _Out = None) -> Any:
    """The (complex) eigenvalues and eigenvectors of general square matrices: ``(eigenvalues, eigenvectors)``.

    Example::

        >>> fb.linalg.eig(fb.tensor([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
        tensor([0.+1.j, 0.-1.j])
    """
    return FUNCTIONS["linalg_eig"](A, out=out)


def eigvals(A: Tensor, *, out: _Out = None) -> Tensor:
    """The (complex) eigenvalues of general square matrices.

    Example::

        >>> fb.linalg.eigvals(fb.eye(2))
        tensor([1.+0.j, 1.+0.j])
    """
    return FUNCTIONS["linalg_eigvals"](A, out=out)


def eigh(A: Tensor, UPLO: str = "L", *, out: _Out = None) -> Any:
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices, reading the ``UPLO`` triangle.

    Example::

        >>> fb.linalg.eigh(fb.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
        tensor([1., 3.])
    """
    return FUNCTIONS["linalg_eigh"](A, UPLO, out=out)


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: _Out = None) -> Tensor:
    """The eigenvalues (ascending, real) of Hermitian matrices.

    Example::

        >>> fb.linalg.eigvalsh(fb.tensor([[2.0, 1.0], [1.0, 2.0]]))
        tensor([1., 3.])
    """
    return FUNCTIONS["linalg_eigvalsh"](A, UPLO, out=out)


def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None, out: _Out = None) -> Any:
    """The singular value decomposition ``A = U diag(S) Vh`` as ``(U, S, Vh)``, ``S`` descending.

    Shape:
        ``A``: ``(*, m, n)``; ``S``: ``(*, k)`` with ``k = min(m, n)``; ``U``: ``(*, m, m)`` and
        ``Vh``: ``(*, n, n)``, or ``(*, m, k)`` and ``(*, k, n)`` when ``full_matrices`` is False.

    Example::

        >>> fb.linalg.svd(fb.tensor([[3.0, 0.0], [0.0, 4.0]])).S
        tensor([4., 3.])
    """
    return FUNCTIONS["linalg_svd"](A, full_matrices, driver=driver, out=out)


def svdvals(A: Tensor, *, driver: Any = None, out: _Out = None) -> Tensor:
    """The singular values, descending.

    Example::

        >>> fb.linalg.svdvals(fb.tensor([[3.0, 0.0], [0.0, 4.0]]))
        tensor([4., 3.])
    """
    return FUNCTIONS["linalg_svdvals"](A, driver=driver, out=out)


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                out: _Out = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (int64).

    Example::

        >>> fb.linalg.matrix_rank(fb.ones(3, 3))
        tensor(1)
    """
    return FUNCTIONS["linalg_matrix_rank"](A, atol=atol, rtol=rtol, hermitian=hermitian, out=out)


def multi_dot(tensors: Sequence[Tensor], *, out: _Out = None) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors), in the cheapest order.

    Example::

        >>> fb.linalg.multi_dot([fb.ones(2, 3), fb.ones(3, 4), fb.ones(4)]).shape
        flambeau.Size([2])
    """
    return FUNCTIONS["linalg_multi_dot"](tensors, out=out)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: _Out = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the other dims broadcast).

    Example::

        >>> fb.linalg.cross(fb.tensor([1.0, 0.0, 0.0]), fb.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    return FUNCTIONS["linalg_cross"](input, other, dim=dim, out=out)


def matrix_power(A: Tensor, n: int, *, out: _Out = None) -> Tensor:
    """``A`` multiplied by itself ``n`` times (the identity for 0; powers of the inverse for ``n < 0``).

    Example::

        >>> fb.linalg.matrix_power(fb.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    return FUNCTIONS["matrix_power"](A, n, out=out)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix (``flambeau.matrix_exp``; scaling and squaring
    with a Padé approximant).

    Example::

        >>> fb.linalg.matrix_exp(fb.tensor([[0.0, 1.0], [-1.0, 0.0]]))
        tensor([[ 0.5403,  0.8415],
                [-0.8415,  0.5403]])
    """
    return FUNCTIONS["matrix_exp"](A)


def matmul(input: Tensor, other: Tensor, *, out: _Out = None) -> Tensor:
    """The matrix product (an alias of :func:`flambeau.matmul`)."""
    return FUNCTIONS["matmul"](input, other, out=out)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: _Out = None) -> Tensor:
    """``sum(conj(x) * y)`` along ``dim``, the other dims broadcasting.

    Example::

        >>> fb.linalg.vecdot(fb.tensor([1.0, 2.0]), fb.tensor([3.0, 4.0]))
        tensor(11.)
    """
    return FUNCTIONS["linalg_vecdot"](x, y, dim=dim, out=out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of a batch of matrices (a view; :func:`flambeau.diagonal` with matrix defaults).

    Example::

        >>> fb.linalg.diagonal(fb.eye(2))
        tensor([1., 1.])
    """
    return FUNCTIONS["diagonal"](A, offset, dim1, dim2)

r"""``matrix_exp``: the matrix exponential, by scaling and squaring with a Padé approximant.

The maths (Higham, "The scaling and squaring method for the matrix exponential revisited",
SIAM J. Matrix Anal. Appl. 26(4), 2005):

- ``exp(A) = exp(A / 2^s)^(2^s)``: scale ``A`` until its 1-norm is at most ``theta_m``, then
  square the result ``s`` times.
- On the scaled matrix, the diagonal ``[m/m]`` Padé approximant ``r_m(X) = q_m(X)^{-1} p_m(X)`` with
  ``p_m(X) = sum_k b_k X^k`` and ``q_m(X) = p_m(-X)``. Splitting ``p_m`` into its odd part
  ``U = X sum_j b_{2j+1} X^{2j}`` and its even part ``V = sum_j b_{2j} X^{2j}`` gives
  ``p_m = V + U`` and ``q_m = V - U``: one solve of ``(V - U) R = (V + U)``.
- ``theta_m`` is the largest 1-norm for which the backward error of ``r_m`` stays below the unit
  roundoff; the smallest ``m`` whose ``theta_m`` covers the norm is cheapest. Beyond the largest
  degree the matrix is scaled.

Each matrix of a batch gets its own ``s`` (squarings stop for it once done); the degree is the one
the batch's largest norm needs. A matrix with a NaN or infinite entry gives a matrix of NaN, as
PyTorch's does. float16 and bfloat16 are computed in float32.

This module holds the declaration and the composite (written with flambeau ops, for backends
without a kernel of their own); the CPU backend runs the same algorithm in numpy.
"""
from __future__ import annotations

import math

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.matrix_exp_plan import PADE, degree_and_squarings, thetas
from ..ops.meta import type_name
from ._linalg_checks import check_square


def _meta(A: Tensor) -> tuple:
    op = "linalg.matrix_exp"
    check_square(op, A)
    if A._dtype._category < _dtypes._FLOAT:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {type_name(A._dtype)}")
    return tuple(A._data.shape), A._dtype


def _pade(X: Tensor, m: int) -> Tensor:
    """``r_m(X)`` for a batch of (scaled) matrices, with flambeau ops."""
    from ..ops._registry import FUNCTIONS

    b = PADE[m]
    n = X.shape[-1]
    eye = FUNCTIONS["eye"](n, dtype=X.dtype, device=X.device)
    X2 = X @ X
    if m == 13:
        X4 = X2 @ X2
        X6 = X4 @ X2
        U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
        V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    else:
        odd, even = b[1] * eye, b[0] * eye
        power = eye
        for k in range(2, m + 1, 2):
            power = X2 if k == 2 else power @ X2
            odd = odd + b[k + 1] * power
            even = even + b[k] * power
        U, V = X @ odd, even
    return FUNCTIONS["linalg_solve"](V - U, V + U)


def _matrix_exp(A: Tensor) -> Tensor:
    from ..ops._registry import FUNCTIONS

    if A.numel() == 0:
        return A.clone()
    low = A.dtype in (_dtypes.float16, _dtypes.bfloat16)
    X = A.to(_dtypes.float32) if low else A
    double = X.dtype in (_dtypes.float64, _dtypes.complex128)
    norms = X.abs().sum(-2).amax(-1)  # the 1-norm: the largest column sum
    finite = norms.isfinite()
    X = FUNCTIONS["where"](finite[..., None, None], X, 0.0)
    norms = FUNCTIONS["where"](finite, norms, 0.0)
    m, top = degree_and_squarings(float(norms.max()), double)
    if top:
        theta = thetas(double)[-1][1]
        # per matrix: the smallest s >= 0 with norm / 2^s <= theta
        s = (norms / theta).log2().ceil().clamp(min=0)
        X = X * FUNCTIONS["exp2"](-s).to(X.dtype)[..., None, None]
    R = _pade(X, m)
    for k in range(top):
        R = FUNCTIONS["where"]((s > k)[..., None, None], R @ R, R)
    R = FUNCTIONS["where"](finite[..., None, None], R, math.nan)
    return R.to(A.dtype) if low else R


DOC = r"""matrix_exp(A) -> Tensor

The matrix exponential of each square matrix of ``A``:
:math:`\exp(A) = \sum_{k=0}^\infty A^k / k!`. Also ``flambeau.linalg.matrix_exp`` and
``Tensor.matrix_exp``.

Computed by scaling and squaring with a Padé approximant (Higham 2005): ``A`` is divided by
``2^s`` until its 1-norm is small enough for a Padé approximant of degree 3 to 13 (to 7 in single
precision) to be exact to rounding, and the approximant is squared ``s`` times. float16 and
bfloat16 are computed in float32. A matrix with a NaN or infinite entry gives NaN everywhere.

Args:
    A (Tensor): float or complex, shape :math:`(*, n, n)`.

Shape:
    - Input: :math:`(*, n, n)`, any batch dims.
    - Output: the same.

Raises:
    RuntimeError: ``A`` has fewer than 2 dims, is not square, or is not float or complex.

Example::

    >>> A = flambeau.tensor([[0.0, 1.0], [-1.0, 0.0]])
    >>> flambeau.linalg.matrix_exp(A)  # a rotation by 1 radian
    tensor([[ 0.5403,  0.8415],
            [-0.8415,  0.5403]])
"""


def declarations() -> list[OpDecl]:
    return [OpDecl("matrix_exp", "(A: Tensor)", _meta, composite=_matrix_exp, doc=DOC)]

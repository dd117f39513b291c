"""The matrix exponential in numpy: scaling and squaring with a Padé approximant, batched.

The algorithm is core-tensor's composite's (``flambeau._core_ops.matrix_exp``, whose docstring
gives the maths), with its plan from the public ``flambeau.ops.matrix_exp_plan``: the same steps
on numpy arrays, vectorised over the batch (scipy's ``expm`` loops over a batch in
Python and special-cases triangular matrices, where PyTorch, and this kernel, do not).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _threads
from flambeau.ops.matrix_exp_plan import PADE, degree_and_squarings, thetas


def _pade(X: np.ndarray, m: int) -> np.ndarray:
    b = PADE[m]
    eye = np.eye(X.shape[-1], dtype=X.dtype)
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
    # the [m/m] approximant: (V - U)^{-1} (V + U); V - U is well conditioned for norms below theta_m
    with _threads.one_blas_thread():  # LU: see flambeau_cpu._threads
        return np.linalg.solve(V - U, V + U)


def matrix_exp(A, out):
    if A.size == 0:
        return
    X = A.astype(np.float32) if A.dtype.itemsize == 2 else A  # float16 / bfloat16 in float32
    double = X.dtype in (np.float64, np.complex128)
    with np.errstate(all="ignore"):  # overflow to inf (and inf * 0) gives NaN, as in PyTorch
        norms = np.abs(X).sum(-2).max(-1)
        finite = np.isfinite(norms)
        if not finite.all():
            X = np.where(finite[..., None, None], X, 0)
            norms = np.where(finite, norms, 0)
        m, top = degree_and_squarings(float(norms.max()), double)
        if top:
            theta = thetas(double)[-1][1]
            s = np.maximum(np.ceil(np.log2(np.maximum(norms, np.finfo(np.float64).tiny) / theta)), 0)
            X = X * np.exp2(-s).astype(X.real.dtype)[..., None, None]
        R = _pade(X, m)
        for k in range(top):
            R = np.where((s > k)[..., None, None], R @ R, R)
        if not finite.all():
            R = np.where(finite[..., None, None], R, np.nan)
    np.copyto(out, R, casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {"matrix_exp": matrix_exp}

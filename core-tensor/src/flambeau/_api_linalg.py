"""PyTorch's top-level names for linear algebra (``torch.det``, ``Tensor.inverse``...) and the
``flambeau.linalg`` / ``flambeau.fft`` namespaces, installed on ``flambeau`` and ``Tensor``."""
from __future__ import annotations

from types import ModuleType
from typing import Any

from ._tensor import Tensor
from .ops._registry import FUNCTIONS


def det(input: Tensor) -> Tensor:
    """The determinant of each square matrix (:func:`flambeau.linalg.det`)."""
    return FUNCTIONS["linalg_det"](input)


def logdet(input: Tensor) -> Tensor:
    """The log of each determinant: NaN for a negative one, ``-inf`` for zero.

    Example::

        >>> fb.logdet(fb.eye(2) * 2)
        tensor(1.3863)
    """
    sign, logabs = FUNCTIONS["linalg_slogdet"](input)
    if input.dtype.is_complex:
        return logabs + sign.log()  # the log of the phase: i * angle
    return FUNCTIONS["where"](sign < 0, float("nan"), logabs)


def slogdet(input: Tensor) -> Any:
    """The sign and log absolute determinant (:func:`flambeau.linalg.slogdet`)."""
    return FUNCTIONS["linalg_slogdet"](input)


def inverse(input: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix (:func:`flambeau.linalg.inv`)."""
    return FUNCTIONS["linalg_inv"](input, out=out)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with singular values below ``rcond * largest`` dropped (:func:`flambeau.linalg.pinv`)."""
    return FUNCTIONS["linalg_pinv"](input, rtol=rcond)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """The legacy ``torch.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``); reduced when ``some``.

    Without ``compute_uv``, ``U`` and ``V`` are zero matrices of the full shapes (as in PyTorch).

    Example::

        >>> fb.svd(fb.eye(2)).S
        tensor([1., 1.])
    """
    from . import return_types

    cls = return_types.for_op("svd", ("U", "S", "V"))
    if not compute_uv:
        S = FUNCTIONS["linalg_svdvals"](input)
        *batch, m, n = input.shape
        from . import zeros as _zeros

        U = _zeros((*batch, m, m), dtype=input.dtype, device=input.device)
        V = _zeros((*batch, n, n), dtype=input.dtype, device=input.device)
        return cls(U, S, V)
    U, S, Vh = FUNCTIONS["linalg_svd"](input, not some)
    return cls(U, S, Vh.mH)


def qr(input: Tensor, some: bool = True) -> Any:
    """The legacy ``torch.qr``: ``(Q, R)``, reduced when ``some`` (see :func:`flambeau.linalg.qr`)."""
    from . import return_types

    Q, R = FUNCTIONS["linalg_qr"](input, "reduced" if some else "complete")
    return return_types.for_op("qr", ("Q", "R"))(Q, R)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """The legacy ``torch.cholesky`` (see :func:`flambeau.linalg.cholesky`)."""
    return FUNCTIONS["linalg_cholesky"](input, upper=upper)


def install(namespace: ModuleType) -> None:
    from . import linalg  # (flambeau.fft loads at first use: flambeau.__getattr__)

    namespace.linalg = linalg
    for fn in (det, logdet, slogdet, inverse, pinverse, svd, qr, cholesky):
        setattr(namespace, fn.__name__, fn)
        setattr(Tensor, fn.__name__, fn)

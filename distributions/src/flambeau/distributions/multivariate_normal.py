"""The multivariate normal distribution, parameterised by a covariance, precision or scale_tril matrix."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: fb.Tensor, bvec: fb.Tensor) -> fb.Tensor:
    """Batched matrix-vector product with broadcasting of the batch dimensions."""
    return fb.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: fb.Tensor, bx: fb.Tensor) -> fb.Tensor:
    """The squared Mahalanobis distance ``x^T (L L^T)^{-1} x`` for a lower-triangular ``L``."""
    n = bx.size(-1)
    if bL.dim() == 2:
        # One factor for every point: one triangular solve with all points as right-hand sides.
        flat = bx.reshape(-1, n)
        sol = fb.linalg.solve_triangular(bL, flat.mT, upper=False)
        return sol.pow(2).sum(0).reshape(tuple(bx.shape[:-1]))
    batch = fb.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,))
    sol = fb.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(P: fb.Tensor) -> fb.Tensor:
    """The lower Cholesky factor of ``P^{-1}`` without inverting ``P``: from the Cholesky factor of ``P``
    with its rows and columns reversed."""
    Lf = fb.linalg.cholesky(fb.flip(P, (-2, -1)))
    L_inv = fb.transpose(fb.flip(Lf, (-2, -1)), -2, -1)
    Id = fb.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return fb.linalg.solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    """A multivariate normal distribution with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (a lower-triangular factor of the covariance with a positive
    diagonal; the cheapest to give).
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: fb.Tensor, covariance_matrix: fb.Tensor | None = None,
                 precision_matrix: fb.Tensor | None = None, scale_tril: fb.Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")

        def batch_of(matrix: fb.Tensor, name: str) -> tuple:
            if matrix.dim() < 2:
                raise ValueError(f"{name} matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            return tuple(fb.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))

        if scale_tril is not None:
            batch_shape = batch_of(scale_tril, "scale_tril")
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            batch_shape = batch_of(covariance_matrix, "covariance_matrix")
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            assert precision_matrix is not None
            batch_shape = batch_of(precision_matrix, "precision_matrix")
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = tuple(self.loc.shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = fb.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MultivariateNormal":
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> fb.Tensor:
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> fb.Tensor:
        L = self._unbroadcasted_scale_tril
        return fb.matmul(L, L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self) -> fb.Tensor:
        L = self._unbroadcasted_scale_tril
        Id = fb.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = fb.linalg.solve_triangular(L, Id, upper=False)
        return fb.matmul(L_inv.mT, L_inv).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self) -> fb.Tensor:
        return self.loc

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def variance(self) -> fb.Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> fb.Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))

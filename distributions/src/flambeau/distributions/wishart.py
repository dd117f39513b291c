"""The Wishart distribution over positive-definite matrices."""
from __future__ import annotations

import math
from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x: fb.Tensor, p: int) -> fb.Tensor:
    """The multivariate digamma function: the derivative of ``mvlgamma(x, p)``."""
    offsets = fb.arange(p, dtype=x.dtype, device=x.device) / 2
    return fb.digamma(x.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    """A Wishart distribution with ``df`` degrees of freedom and scale matrix given by one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``; sampled by the Bartlett decomposition.

    Args:
        df (float or Tensor): degrees of freedom, greater than the dimension minus 1.
        covariance_matrix (Tensor): positive-definite scale matrix.
        precision_matrix (Tensor): positive-definite inverse of the scale matrix.
        scale_tril (Tensor): lower-triangular factor of the scale matrix, with a positive diagonal.
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df: Any, covariance_matrix: fb.Tensor | None = None, precision_matrix: fb.Tensor | None = None,
                 scale_tril: fb.Tensor | None = None, validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = fb.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(fb.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.dim() < len(batch_shape):
            self.df = self.df.expand(batch_shape)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = fb.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # Chi2 distribution is needed for Bartlett decomposition sampling
        p = event_shape[-1]
        self._dist_chi2 = Chi2(df=(self.df.unsqueeze(-1) - fb.arange(p, dtype=param.dtype, device=param.device)
                                   .expand(batch_shape + (-1,))))

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Wishart":
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        p = self.event_shape[-1]
        new._dist_chi2 = Chi2(df=(new.df.unsqueeze(-1) - fb.arange(p, dtype=new.df.dtype, device=new.df.device)
                                  .expand(batch_shape + (-1,))))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> fb.Tensor:
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> fb.Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self) -> fb.Tensor:
        L = self._unbroadcasted_scale_tril
        Id = fb.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        L_inv = fb.linalg.solve_triangular(L, Id, upper=False)
        return (L_inv.mT @ L_inv).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def _df_matrix(self) -> fb.Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> fb.Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> fb.Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = fb.where(factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> fb.Tensor:
        V = self.covariance_matrix  # has shape (batch_shape x event_shape)
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        """Bartlett decomposition: ``L A A^T L^T`` with ``A`` lower triangular, ``A_ii ~ sqrt(Chi2(df - i))``
        and standard normal entries below the diagonal."""
        sample_shape = tuple(sample_shape)
        shape = tuple(self._extended_shape(sample_shape))
        p = self._event_shape[-1]
        tiny = fb.finfo(self.df.dtype).eps
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=tiny)
        below = fb.randn(shape[:-2] + (p * (p - 1) // 2,), dtype=self.df.dtype, device=self.df.device)
        noise = fb.diag_embed(chi) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        L = self._unbroadcasted_scale_tril
        value_tril = fb.linalg.cholesky(value)
        logdet_value = 2 * value_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        batch = tuple(fb.broadcast_shapes(tuple(L.shape[:-2]), tuple(value_tril.shape[:-2])))
        trace = fb.linalg.solve_triangular(L.expand(batch + (p, p)), value_tril.expand(batch + (p, p)),
                                           upper=False).pow(2).sum((-2, -1))
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - fb.mvlgamma(nu / 2, p) + (nu - p - 1) / 2 * logdet_value - trace / 2)

    def entropy(self) -> fb.Tensor:
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return ((p + 1) * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + fb.mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-fb.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + fb.mvlgamma(y + (p + 1) / 2, p))

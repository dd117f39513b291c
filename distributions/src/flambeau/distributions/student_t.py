"""Student's t distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """A Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    Args:
        df (float or Tensor): degrees of freedom (positive).
        loc (float or Tensor): mean of the distribution.
        scale (float or Tensor): scale of the distribution (positive).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> fb.Tensor:
        return fb.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def variance(self) -> fb.Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / fb.where(df > 2, df - 2, 1.0)
        return fb.where(df > 2, finite, fb.where(df > 1, math.inf, math.nan))

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "StudentT":
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        new.df = self.df.expand(tuple(batch_shape))
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        # X ~ Normal(0, 1), Z ~ Chi2(df), Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * fb.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + fb.lgamma(0.5 * self.df) - fb.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fb.log1p(y ** 2.0 / self.df) - Z

    def entropy(self) -> fb.Tensor:
        lbeta = fb.lgamma(0.5 * self.df) + math.lgamma(0.5) - fb.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (fb.digamma(0.5 * (self.df + 1))
                                                          - fb.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)

"""The Fisher-Snedecor (F) distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """A Fisher-Snedecor distribution: the ratio of two scaled chi-squared variables.

    Args:
        df1 (float or Tensor): degrees of freedom parameter 1 (positive).
        df2 (float or Tensor): degrees of freedom parameter 2 (positive).
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "FisherSnedecor":
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        new.df1 = self.df1.expand(tuple(batch_shape))
        new.df2 = self.df2.expand(tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> fb.Tensor:
        df2 = self.df2
        return fb.where(df2 > 2, df2 / fb.where(df2 > 2, df2 - 2, 1.0), math.nan)

    @property
    def mode(self) -> fb.Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return fb.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> fb.Tensor:
        df1, df2 = self.df1, self.df2
        safe = fb.where(df2 > 4, df2, 5.0)
        var = 2 * safe.pow(2) * (df1 + safe - 2) / (df1 * (safe - 2).pow(2) * (safe - 4))
        return fb.where(df2 > 4, var, math.nan)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        # X1 ~ Gamma(df1 / 2, df1), X2 ~ Gamma(df2 / 2, df2), Y = X1 / X2 ~ F(df1, df2)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = fb.finfo(X2.dtype).tiny
        Y = X1 / X2.clamp(min=tiny)
        return Y.clamp(min=tiny)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * fb.log(value)
        t3 = (ct1 + ct2) * fb.log1p(ct3 * value)
        return t1 + t2 - t3

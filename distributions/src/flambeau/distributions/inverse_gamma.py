"""The inverse Gamma distribution: ``1 / X`` for ``X ~ Gamma(concentration, rate)``."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """An inverse gamma distribution: ``1 / X`` with ``X ~ Gamma(concentration, rate)``.

    Args:
        concentration (float or Tensor): shape parameter (alpha, positive).
        rate (float or Tensor): scale parameter (beta, positive).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "InverseGamma":
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> fb.Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> fb.Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> fb.Tensor:
        c = self.concentration
        return fb.where(c > 1, self.rate / fb.where(c > 1, c - 1, 1.0), math.inf)

    @property
    def mode(self) -> fb.Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> fb.Tensor:
        c = self.concentration
        safe = fb.where(c > 2, c, 3.0)
        return fb.where(c > 2, self.rate.pow(2) / ((safe - 1).pow(2) * (safe - 2)), math.inf)

    def entropy(self) -> fb.Tensor:
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())

"""The half-Cauchy distribution: ``|X|`` for ``X ~ Cauchy(0, scale)``."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """A half-Cauchy distribution parameterised by ``scale``: ``|X|`` with ``X ~ Cauchy(0, scale)``.

    Args:
        scale (float or Tensor): scale of the full Cauchy distribution (positive).
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "HalfCauchy":
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def scale(self) -> fb.Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> fb.Tensor:
        return fb.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def mode(self) -> fb.Tensor:
        return fb.zeros_like(self.scale)

    @property
    def variance(self) -> fb.Tensor:
        return self.base_dist.variance

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = fb.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return fb.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: fb.Tensor) -> fb.Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> fb.Tensor:
        return self.base_dist.entropy() - math.log(2)

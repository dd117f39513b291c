"""The log-normal distribution: ``exp(X)`` for ``X ~ Normal(loc, scale)``."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """A log-normal distribution: ``exp(X)`` with ``X ~ Normal(loc, scale)``.

    Args:
        loc (float or Tensor): mean of the log of the distribution.
        scale (float or Tensor): standard deviation of the log of the distribution (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LogNormal":
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> fb.Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> fb.Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> fb.Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> fb.Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> fb.Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> fb.Tensor:
        return self.base_dist.entropy() + self.loc

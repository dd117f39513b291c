"""The logistic-normal distribution on the simplex."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A logistic-normal distribution: ``StickBreakingTransform()(X)`` with ``X ~ Normal(loc, scale)``
    (a ``K-1``-vector mapped onto the ``K``-simplex).

    Args:
        loc (float or Tensor): mean of the base distribution.
        scale (float or Tensor): standard deviation of the base distribution (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LogisticNormal":
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> fb.Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> fb.Tensor:
        return self.base_dist.base_dist.scale

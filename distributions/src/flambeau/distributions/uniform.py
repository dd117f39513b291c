"""The continuous Uniform distribution on ``[low, high)``."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniformly distributed samples from the half-open interval ``[low, high)``.

    Args:
        low (float or Tensor): lower range (inclusive).
        high (float or Tensor): upper range (exclusive).
    """

    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    @property
    def mean(self) -> fb.Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> fb.Tensor:
        return fb.full_like(self.high, float("nan"))

    @property
    def stddev(self) -> fb.Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> fb.Tensor:
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)
        if self._validate_args and not bool(fb.lt(self.low, self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Uniform":
        return _expand_params(self, Uniform, batch_shape, ("low", "high"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        rand = fb.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return fb.log(lb.mul(ub)) - fb.log(self.high - self.low)

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> fb.Tensor:
        return fb.log(self.high - self.low)

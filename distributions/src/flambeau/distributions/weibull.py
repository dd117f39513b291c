"""The two-parameter Weibull distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """A Weibull distribution: ``scale * X ** (1 / concentration)`` with ``X ~ Exponential(1)``.

    Args:
        scale (float or Tensor): scale parameter (lambda, positive).
        concentration (float or Tensor): concentration parameter (k, positive).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(fb.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Weibull":
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = tuple(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> fb.Tensor:
        return self.scale * fb.exp(fb.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> fb.Tensor:
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self) -> fb.Tensor:
        return self.scale.pow(2) * (fb.exp(fb.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - fb.exp(2 * fb.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> fb.Tensor:
        return (euler_constant * (1 - self.concentration_reciprocal)
                + fb.log(self.scale * self.concentration_reciprocal) + 1)

"""The Gumbel (type-I extreme value) distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """A Gumbel distribution: ``loc - scale * log(-log(U))`` for ``U ~ Uniform(0, 1)``.

    Args:
        loc (float or Tensor): location parameter.
        scale (float or Tensor): scale parameter (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = fb.finfo(self.loc.dtype)
        base_dist = Uniform(fb.full_like(self.loc, finfo.tiny), fb.full_like(self.loc, 1 - finfo.eps),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-fb.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gumbel":
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    # Explicitly defined: the transforms' log-det-Jacobians lose precision in the tails.
    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return fb.exp(-fb.exp(-(value - self.loc) / self.scale))

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        return self.loc - self.scale * fb.log(-fb.log(value))

    @property
    def mean(self) -> fb.Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def stddev(self) -> fb.Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> fb.Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> fb.Tensor:
        return self.scale.log() + (1 + euler_constant)

"""The Cauchy (Lorentz) distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """A Cauchy distribution: the ratio of two independent standard normals, shifted and scaled.

    Args:
        loc (float or Tensor): mode or median.
        scale (float or Tensor): half width at half maximum (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Cauchy":
        return _expand_params(self, Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> fb.Tensor:
        return fb.full(tuple(self._extended_shape()), float("nan"), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def variance(self) -> fb.Tensor:
        return fb.full(tuple(self._extended_shape()), float("inf"), dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        u = fb.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * fb.tan(math.pi * (u - 0.5))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return fb.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        return fb.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> fb.Tensor:
        return math.log(4 * math.pi) + self.scale.log()

"""The Normal (Gaussian) distribution."""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """A normal distribution parameterised by ``loc`` (mean) and ``scale`` (standard deviation).

    Args:
        loc (float or Tensor): the mean.
        scale (float or Tensor): the standard deviation (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> fb.Tensor:
        return self.loc

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def stddev(self) -> fb.Tensor:
        return self.scale

    @property
    def variance(self) -> fb.Tensor:
        return self.stddev.pow(2)

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Normal":
        return _expand_params(self, Normal, batch_shape, ("loc", "scale"), _instance)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + fb.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        return self.loc + self.scale * fb.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> fb.Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + fb.log(self.scale)

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * fb.log(-math.pi / y)

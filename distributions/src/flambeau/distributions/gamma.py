"""The Gamma distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _standard_gamma, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """A Gamma distribution parameterised by shape ``concentration`` and ``rate``; ``rsample`` is
    reparameterised implicitly (the derivative of the CDF in the concentration).

    Args:
        concentration (float or Tensor): shape parameter (alpha, positive).
        rate (float or Tensor): rate parameter (beta = 1 / scale, positive).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> fb.Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> fb.Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> fb.Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gamma":
        return _expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        value = fb.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (fb.xlogy(self.concentration, self.rate) + fb.xlogy(self.concentration - 1, value)
                - self.rate * value - fb.lgamma(self.concentration))

    def entropy(self) -> fb.Tensor:
        return (self.concentration - fb.log(self.rate) + fb.lgamma(self.concentration)
                + (1.0 - self.concentration) * fb.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return fb.lgamma(x + 1) + (x + 1) * fb.log(-y.reciprocal())

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return fb.igamma(self.concentration, self.rate * value)

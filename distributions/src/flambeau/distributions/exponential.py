"""The Exponential distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


def _standard_exponential(shape: Any, like: fb.Tensor) -> fb.Tensor:
    """Standard exponential draws by inversion: ``-log(1 - U)`` is finite for ``U`` in ``[0, 1)``."""
    u = fb.rand(tuple(shape), dtype=like.dtype, device=like.device)
    return -fb.log1p(-u)


class Exponential(ExponentialFamily):
    """An exponential distribution parameterised by ``rate`` (the inverse scale).

    Args:
        rate (float or Tensor): rate = 1 / scale of the distribution (positive).
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> fb.Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> fb.Tensor:
        return fb.zeros_like(self.rate)

    @property
    def stddev(self) -> fb.Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> fb.Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Exponential":
        return _expand_params(self, Exponential, batch_shape, ("rate",), _instance)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        return _standard_exponential(shape, self.rate) / self.rate

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - fb.exp(-self.rate * value)

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        return -fb.log1p(-value) / self.rate

    def entropy(self) -> fb.Tensor:
        return 1.0 - fb.log(self.rate)

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: fb.Tensor) -> fb.Tensor:
        return -fb.log(-x)

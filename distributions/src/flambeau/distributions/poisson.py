"""The Poisson distribution."""
from __future__ import annotations

from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """A Poisson distribution parameterised by ``rate``: ``P(k) = rate^k e^{-rate} / k!``.

    Args:
        rate (Number, Tensor): the rate parameter (non-negative).
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> fb.Tensor:
        return self.rate

    @property
    def mode(self) -> fb.Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> fb.Tensor:
        return self.rate

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Poisson":
        return _expand_params(self, Poisson, batch_shape, ("rate",), _instance)

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        from flambeau.ops import fn

        with fb.no_grad():
            return fn.dist_poisson(self.rate.expand(shape))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (fb.log(self.rate),)

    def _log_normalizer(self, x: fb.Tensor) -> fb.Tensor:
        return fb.exp(x)

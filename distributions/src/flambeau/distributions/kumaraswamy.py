"""The Kumaraswamy distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: fb.Tensor, b: fb.Tensor, n: int) -> fb.Tensor:
    """The n-th moment ``b B(1 + n / a, b)`` of Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = fb.lgamma(arg1) + fb.lgamma(b) - fb.lgamma(arg1 + b)
    return b * fb.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """A Kumaraswamy distribution on ``(0, 1)``: density ``a b x^(a-1) (1 - x^a)^(b-1)``, sampled by
    inverting its CDF ``1 - (1 - x^a)^b``.

    Args:
        concentration1 (float or Tensor): 1st concentration parameter (alpha, positive).
        concentration0 (float or Tensor): 2nd concentration parameter (beta, positive).
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(fb.full_like(self.concentration0, 0), fb.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Kumaraswamy":
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> fb.Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> fb.Tensor:
        # Evaluate in log-space for numerical stability.
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode = fb.where((self.concentration0 < 1) | (self.concentration1 < 1), math.nan, log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> fb.Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - fb.pow(self.mean, 2)

    def entropy(self) -> fb.Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = fb.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - fb.log(self.concentration1) - fb.log(self.concentration0)

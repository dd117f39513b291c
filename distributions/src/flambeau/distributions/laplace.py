"""The Laplace distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """A Laplace distribution parameterised by ``loc`` and ``scale``.

    Args:
        loc (float or Tensor): the mean.
        scale (float or Tensor): the scale (positive).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> fb.Tensor:
        return self.loc

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def variance(self) -> fb.Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> fb.Tensor:
        return (2 ** 0.5) * self.scale

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Laplace":
        return _expand_params(self, Laplace, batch_shape, ("loc", "scale"), _instance)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        finfo = fb.finfo(self.loc.dtype)
        # u in (-1, 1): the open interval keeps log1p(-|u|) finite.
        u = fb.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * 2 - 1
        u = u.clamp(min=finfo.eps - 1, max=1)
        return self.loc - self.scale * u.sign() * fb.log1p(-u.abs())

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -fb.log(2 * self.scale) - fb.abs(value - self.loc) / self.scale

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * fb.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        term = value - 0.5
        return self.loc - self.scale * (term).sign() * fb.log1p(-2 * term.abs())

    def entropy(self) -> fb.Tensor:
        return 1 + fb.log(2 * self.scale)

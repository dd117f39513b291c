"""The generalised Pareto distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]

#: |concentration| below this is treated as 0 (the exponential limit), where 1/c loses precision.
_ZERO = 1e-8


class GeneralizedPareto(Distribution):
    """A generalised Pareto distribution with location ``loc``, scale ``scale`` and shape
    ``concentration`` (``xi``): CDF ``1 - (1 + xi z)^(-1/xi)`` with ``z = (x - loc) / scale``
    (``1 - exp(-z)`` at ``xi = 0``). The support is ``[loc, inf)`` for ``xi >= 0`` and
    ``[loc, loc - scale / xi]`` for ``xi < 0``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "GeneralizedPareto":
        return _expand_params(self, GeneralizedPareto, batch_shape, ("loc", "scale", "concentration"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        lower = self.loc
        upper = fb.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)

    def _zero(self) -> tuple[fb.Tensor, fb.Tensor]:
        """Where the concentration is (numerically) 0, and a concentration safe to divide by."""
        is_zero = self.concentration.abs() < _ZERO
        return is_zero, fb.where(is_zero, 1.0, self.concentration)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = fb.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, safe = self._zero()
        inside = (z >= 0) & ((self.concentration >= 0) | (z <= -1 / safe))
        safe_z = fb.where(inside, z, 0.0)
        tail = fb.where(is_zero, safe_z, (1 / safe + 1) * fb.log1p(safe * safe_z))
        return fb.where(inside, -self.scale.log() - tail, -math.inf)

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = ((value - self.loc) / self.scale).clamp(min=0)
        is_zero, safe = self._zero()
        upper = fb.where(self.concentration < 0, -1 / safe, math.inf)
        z = fb.minimum(z, upper)
        log_survival = fb.where(is_zero, -z, -fb.log1p(safe * z) / safe)
        return -fb.expm1(log_survival)

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        is_zero, safe = self._zero()
        log_survival = fb.log1p(-value)
        z = fb.where(is_zero, -log_survival, fb.expm1(-safe * log_survival) / safe)
        return self.loc + self.scale * z

    @property
    def mean(self) -> fb.Tensor:
        c = self.concentration
        return fb.where(c < 1, self.loc + self.scale / fb.where(c < 1, 1 - c, 1.0), math.inf)

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @property
    def variance(self) -> fb.Tensor:
        c = self.concentration
        safe = fb.where(c < 0.5, c, 0.0)
        return fb.where(c < 0.5, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)), math.inf)

    def entropy(self) -> fb.Tensor:
        return self.scale.log() + self.concentration + 1

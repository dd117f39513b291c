"""The von Mises distribution on the circle."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x: fb.Tensor) -> fb.Tensor:
    """``log I0(x)`` for x >= 0, through the exponentially scaled ``i0e`` (no overflow)."""
    return fb.special.i0e(x).log() + x


class VonMises(Distribution):
    """A circular von Mises distribution, sampled by Best and Fisher's rejection method (1979);
    computations happen in float64 and samples are returned in ``loc``'s dtype.

    Args:
        loc (Tensor): an angle in radians.
        concentration (Tensor): concentration parameter (positive).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "VonMises":
        new = _expand_params(self, VonMises, batch_shape, ("loc", "concentration"), _instance)
        return new

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * fb.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self) -> fb.Tensor:
        return self.loc.to(fb.float64)

    @lazy_property
    def _concentration(self) -> fb.Tensor:
        return self.concentration.to(fb.float64)

    @lazy_property
    def _proposal_r(self) -> fb.Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho ** 2) / (2 * rho)
        # second order Taylor expansion around 0 for small kappa
        _proposal_r_taylor = 1 / kappa + kappa
        return fb.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with fb.no_grad():
            loc = self._loc.expand(shape)
            concentration = self._concentration.expand(shape)
            proposal_r = self._proposal_r.expand(shape)
            x = fb.zeros(shape, dtype=fb.float64, device=self.loc.device)
            done = fb.zeros(shape, dtype=fb.bool, device=self.loc.device)
            while not bool(done.all()):
                u = fb.rand((3,) + shape, dtype=fb.float64, device=self.loc.device)
                u1, u2, u3 = u.unbind()
                z = fb.cos(math.pi * u1)
                f = (1 + proposal_r * z) / (proposal_r + z)
                c = concentration * (proposal_r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                accept = accept & ~done
                x = fb.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self) -> fb.Tensor:
        """The provided mean is the circular one."""
        return self.loc

    @property
    def mode(self) -> fb.Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> fb.Tensor:
        """The provided variance is the circular one: ``1 - I1(k) / I0(k)``."""
        k = self.concentration
        return 1 - fb.special.i1e(k) / fb.special.i0e(k)

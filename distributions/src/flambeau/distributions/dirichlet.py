"""The Dirichlet distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _dirichlet_sample, _one_hot

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """A Dirichlet distribution parameterised by ``concentration`` (over the last dimension); ``rsample``
    normalises reparameterised gammas.

    Args:
        concentration (Tensor): concentration parameters (alpha, positive, at least one-dimensional).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: fb.Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Dirichlet":
        return _expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance, {"concentration": 1})

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _dirichlet_sample(self.concentration.expand(shape))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (fb.xlogy(self.concentration - 1.0, value).sum(-1) + fb.lgamma(self.concentration.sum(-1))
                - fb.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> fb.Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> fb.Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # Where every concentration is below 1 the density is unbounded at the vertices: pick the largest.
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = _one_hot(self.concentration.argmax(-1), self.concentration.shape[-1], mode.dtype)
        return fb.where(all_below_one, vertex, mode)

    @property
    def variance(self) -> fb.Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> fb.Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (fb.lgamma(self.concentration).sum(-1) - fb.lgamma(a0) - (k - a0) * fb.digamma(a0)
                - ((self.concentration - 1.0) * fb.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: fb.Tensor) -> fb.Tensor:
        return x.lgamma().sum(-1) - fb.lgamma(x.sum(-1))

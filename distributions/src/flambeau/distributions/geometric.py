"""The Geometric distribution: the number of failures before the first success."""
from __future__ import annotations

from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import _bce_with_logits, _probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """A geometric distribution parameterised by ``probs`` (of success of each Bernoulli trial) or
    ``logits``: ``P(X = k) = (1 - p)^k p`` for ``k = 0, 1, ...``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        batch_shape = () if isinstance(probs_or_logits, Number) else (self.probs if probs is not None
                                                                     else self.logits).size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Add an extra check beyond unit_interval: p = 0 has no finite samples.
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value[~valid]
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraints.positive!r}, "
                                 f"but found invalid values:\n{invalid_value}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Geometric":
        return _expand_params(self, Geometric, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self) -> fb.Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> fb.Tensor:
        return fb.zeros_like(self.probs)

    @property
    def variance(self) -> fb.Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = fb.finfo(self.probs.dtype).tiny
        with fb.no_grad():
            u = fb.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(1 - 1) is 0 here: P(X = 0) = 1 when p = 1.
        probs = fb.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> fb.Tensor:
        return _bce_with_logits(self.logits, self.probs) / self.probs

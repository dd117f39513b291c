"""The Negative Binomial distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .gamma import Gamma
from .utils import _logsigmoid, _probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """A Negative Binomial distribution: the number of successful Bernoulli trials (of probability
    ``probs``) before ``total_count`` failures. ``total_count`` may be any non-negative real.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "NegativeBinomial":
        new = _expand_params(self, NegativeBinomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> fb.Tensor:
        return self.total_count * fb.exp(self.logits)

    @property
    def mode(self) -> fb.Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> fb.Tensor:
        return self.mean / fb.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # Note that we cannot skip validation: NegativeBinomial's probs may be 0 (a rate of inf).
        return Gamma(concentration=self.total_count, rate=fb.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        with fb.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return fb.poisson(rate)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits))
        log_normalization = (-fb.lgamma(self.total_count + value) + fb.lgamma(1.0 + value)
                             + fb.lgamma(self.total_count))
        # The case total_count == 0 and value == 0 has probability 1: its normalisation is 0, not NaN.
        log_normalization = fb.where(self.total_count + value == 0.0, 0.0, log_normalization)
        return log_unnormalized_prob - log_normalization

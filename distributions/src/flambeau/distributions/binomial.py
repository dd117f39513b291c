"""The Binomial distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import _probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x: fb.Tensor) -> fb.Tensor:
    # max(x, 0) with gradient 1/2 at 0, as PyTorch's (the mean of both one-sided derivatives)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """A Binomial distribution: the number of successes in ``total_count`` Bernoulli trials of success
    probability ``probs`` (or log-odds ``logits``). ``total_count`` broadcasts with the probabilities.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
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

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Binomial":
        new = _expand_params(self, Binomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> fb.Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> fb.Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> fb.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        from flambeau.ops import fn

        shape = tuple(self._extended_shape(sample_shape))
        with fb.no_grad():
            return fn.dist_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = fb.lgamma(self.total_count + 1)
        log_factorial_k = fb.lgamma(value + 1)
        log_factorial_nmk = fb.lgamma(self.total_count - value + 1)
        # k log p + (n - k) log(1 - p) = k logits - n log(1 + e^logits), written stably for large |logits|
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * fb.log1p(fb.exp(-fb.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> fb.Tensor:
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(fb.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> fb.Tensor:
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = fb.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

"""The Bernoulli distribution."""
from __future__ import annotations

from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import (_bce_with_logits, _probs_or_logits, _softplus, broadcast_all, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """A Bernoulli distribution parameterised by ``probs`` or ``logits`` (but not both): samples are
    1 with probability ``p`` and 0 with probability ``1 - p``.

    Args:
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Bernoulli":
        new = _expand_params(self, Bernoulli, batch_shape, ("probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> fb.Tensor:
        return self.probs

    @property
    def mode(self) -> fb.Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return fb.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self) -> fb.Tensor:
        return self.probs * (1 - self.probs)

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
        shape = self._extended_shape(sample_shape)
        with fb.no_grad():
            return fb.bernoulli(self.probs.expand(tuple(shape)))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self) -> fb.Tensor:
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> fb.Tensor:
        values = fb.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self) -> tuple:
        return (fb.logit(self.probs),)

    def _log_normalizer(self, x: fb.Tensor) -> fb.Tensor:
        return _softplus(x)

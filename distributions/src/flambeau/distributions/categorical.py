"""The Categorical distribution over ``{0, ..., K-1}``."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution
from .utils import _probs_or_logits, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A categorical distribution parameterised by ``probs`` or ``logits`` (but not both), over the last
    dimension: samples are integers in ``{0, ..., K-1}``. ``probs`` need not sum to one (they are
    normalised); ``logits`` are unnormalised log probabilities.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            # Normalize
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = tuple(self._param.size()[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Categorical":
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> fb.Tensor:
        return fb.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self) -> fb.Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> fb.Tensor:
        return fb.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        sample_shape = fb.Size(tuple(sample_shape))
        with fb.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = fb.multinomial(probs_2d, max(math.prod(sample_shape), 1), True).T
            if math.prod(sample_shape) == 0:
                samples_2d = samples_2d[:0]
            return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = fb.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> fb.Tensor:
        min_real = fb.finfo(self.logits.dtype).min
        logits = fb.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> fb.Tensor:
        num_events = self._num_events
        values = fb.arange(num_events, dtype=fb.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

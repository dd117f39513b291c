"""The relaxed Bernoulli (binary Concrete) distribution and its logit-space form."""
from __future__ import annotations

from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import Distribution, _expand_params
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (_probs_or_logits, _softplus, broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _as_tensor(value: Any, like: fb.Tensor) -> fb.Tensor:
    return value if isinstance(value, fb.Tensor) else fb.tensor(float(value), dtype=like.dtype, device=like.device)


class LogitRelaxedBernoulli(Distribution):
    """The logit of a ``RelaxedBernoulli`` sample (Maddison et al., 2017): ``(logits + L) / temperature``
    with ``L`` a standard logistic variable.

    Args:
        temperature (Tensor): relaxation temperature (positive).
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self.temperature = _as_tensor(temperature, self._param)
        batch_shape = () if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LogitRelaxedBernoulli":
        new = _expand_params(self, LogitRelaxedBernoulli, batch_shape, ("probs", "logits"), _instance)
        new.temperature = self.temperature
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(fb.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * _softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """A relaxed Bernoulli (binary Concrete) distribution on ``(0, 1)``: the sigmoid of a
    ``LogitRelaxedBernoulli``; reparameterisable.

    Args:
        temperature (Tensor): relaxation temperature (positive).
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "RelaxedBernoulli":
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def temperature(self) -> fb.Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> fb.Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> fb.Tensor:
        return self.base_dist.probs

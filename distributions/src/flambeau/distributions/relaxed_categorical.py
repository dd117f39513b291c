"""The relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution and its log-space form."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


def _as_tensor(value: Any, like: fb.Tensor) -> fb.Tensor:
    return value if isinstance(value, fb.Tensor) else fb.tensor(float(value), dtype=like.dtype, device=like.device)


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` sample (the ExpConcrete distribution of Maddison et al.,
    2017): ``log_softmax((logits + G) / temperature)`` with ``G`` standard Gumbel noise.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = _as_tensor(temperature, self._categorical._param)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "ExpRelaxedCategorical":
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    @property
    def logits(self) -> fb.Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> fb.Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        uniforms = clamp_probs(fb.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = fb.broadcast_tensors(self.logits, value)
        log_scale = fb.full_like(self.temperature, float(K)).lgamma() - self.temperature.log().mul(-(K - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution on the simplex:
    ``softmax((logits + G) / temperature)``; reparameterisable.

    Args:
        temperature (Tensor): relaxation temperature (positive).
        probs (Tensor): event probabilities.
        logits (Tensor): unnormalised log probability for each event.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "RelaxedOneHotCategorical":
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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

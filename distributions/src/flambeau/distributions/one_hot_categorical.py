"""The one-hot Categorical distribution, and its straight-through reparameterisation."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import _one_hot

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A categorical distribution whose samples are one-hot vectors of size ``probs.size(-1)``.

    Args:
        probs (Tensor): event probabilities (normalised over the last dimension).
        logits (Tensor): event log probabilities (unnormalised).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "OneHotCategorical":
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self) -> fb.Tensor:
        return self._categorical._param

    @property
    def probs(self) -> fb.Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> fb.Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> fb.Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> fb.Tensor:
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self) -> fb.Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return _one_hot(indices, num_events, probs.dtype)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self) -> fb.Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> fb.Tensor:
        n = self.event_shape[0]
        values = fb.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A one-hot categorical whose ``rsample`` uses the straight-through gradient estimator
    (Bengio et al., 2013): the forward value is a one-hot sample, the gradient that of the probabilities."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # cached via @lazy_property
        return samples + (probs - probs.detach())

"""The Multinomial distribution."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """A Multinomial distribution: counts of ``total_count`` draws from ``Categorical(probs or logits)``.
    ``sample`` needs one shared ``total_count``; ``log_prob`` works for any counts.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    @property
    def mean(self) -> fb.Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> fb.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Multinomial":
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> fb.Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> fb.Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        sample_shape = tuple(sample_shape)
        samples = self._categorical.sample((self.total_count,) + sample_shape)
        # samples.shape is (total_count, sample_shape, batch_shape): move total_count last
        shifted_idx = list(range(samples.dim()))
        shifted_idx.append(shifted_idx.pop(0))
        samples = samples.permute(*shifted_idx)
        shape = tuple(self._extended_shape(sample_shape))
        counts = fb.zeros(shape, dtype=samples.dtype, device=samples.device)
        counts = counts.scatter_add(-1, samples, fb.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> fb.Tensor:
        n = fb.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - fb.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = fb.exp(self._binomial.log_prob(support))
        weights = fb.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = fb.lgamma(value.sum(-1) + 1)
        log_factorial_xs = fb.lgamma(value + 1).sum(-1)
        # 0 * log(0) is 0: an impossible category drawn zero times costs nothing
        logits = fb.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers

"""``ExponentialFamily``: distributions of the form ``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of the exponential-family distributions: ``t(x)`` the sufficient statistic, ``theta``
    the natural parameters, ``F`` the log normaliser, ``k`` the carrier measure.

    Subclasses give ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``; the entropy
    then follows from the Bregman divergence of the log normaliser (its gradient computed by autograd):
    ``H = F(theta) - <theta, grad F(theta)> - E[k(x)]``.
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> fb.Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> fb.Tensor:
        """Entropy from the Bregman divergence of the log normaliser."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with fb.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = fb.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result

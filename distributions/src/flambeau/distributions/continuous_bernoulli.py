"""The continuous Bernoulli distribution (Loaiza-Ganem and Cunningham, 2019)."""
from __future__ import annotations

import math
from numbers import Number
from typing import Any

import flambeau as fb

from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import (_bce_with_logits, _probs_or_logits, broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """A continuous Bernoulli distribution on ``[0, 1]`` parameterised by ``probs`` or ``logits``: density
    ``C(p) p^x (1 - p)^(1 - x)``. Near ``p = 1/2`` (inside ``lims``) its normaliser, mean and variance use
    Taylor expansions, where the closed forms lose precision.

    Args:
        probs (Number, Tensor): parameter in (0, 1).
        logits (Number, Tensor): real parameter whose sigmoid is ``probs``.
        lims (tuple): the unstable region around 1/2.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _probs_or_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # validate 'probs' here if necessary, as it is later clamped for numerical stability
            # close to 0 and 1, and then checked against the constraint again in the base class
            if validate_args is not False and (validate_args or self._validate_args):
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "ContinuousBernoulli":
        new = _expand_params(self, ContinuousBernoulli, batch_shape, ("probs", "logits"), _instance)
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args: Any, **kwargs: Any) -> fb.Tensor:
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self) -> fb.Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> fb.Tensor:
        return fb.where(self._outside_unstable_region(), self.probs, self._lims[0] * fb.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> fb.Tensor:
        """The log of the normalising constant ``C(p) = 2 atanh(1 - 2p) / (1 - 2p)``."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = fb.where(cut_probs <= 0.5, cut_probs, fb.zeros_like(cut_probs))
        cut_probs_above_half = fb.where(cut_probs >= 0.5, cut_probs, fb.ones_like(cut_probs))
        log_norm = (fb.log(fb.abs(fb.log1p(-cut_probs) - fb.log(cut_probs)))
                    - fb.where(cut_probs <= 0.5, fb.log1p(-2.0 * cut_probs_below_half),
                               fb.log(2.0 * cut_probs_above_half - 1.0)))
        x = fb.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fb.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> fb.Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (fb.log1p(-cut_probs) - fb.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * fb.pow(x, 2)) * x
        return fb.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> fb.Tensor:
        return fb.sqrt(self.variance)

    @property
    def variance(self) -> fb.Tensor:
        cut_probs = self._cut_probs()
        vars = (cut_probs * (cut_probs - 1.0) / fb.pow(1.0 - 2.0 * cut_probs, 2)
                + 1.0 / fb.pow(fb.log1p(-cut_probs) - fb.log(cut_probs), 2))
        x = fb.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fb.where(self._outside_unstable_region(), vars, taylor)

    @lazy_property
    def logits(self) -> fb.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> fb.Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        with fb.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = fb.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((fb.pow(cut_probs, value) * fb.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = fb.where(self._outside_unstable_region(), cdfs, value)
        return fb.where(value <= 0.0, fb.zeros_like(value),
                        fb.where(value >= 1.0, fb.ones_like(value), unbounded_cdfs))

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        cut_probs = self._cut_probs()
        return fb.where(self._outside_unstable_region(),
                        (fb.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - fb.log1p(-cut_probs))
                        / (fb.log(cut_probs) - fb.log1p(-cut_probs)),
                        value)

    def entropy(self) -> fb.Tensor:
        log_probs0 = fb.log1p(-self.probs)
        log_probs1 = fb.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: fb.Tensor) -> fb.Tensor:
        """The log normaliser in the natural parameter: ``log((e^x - 1) / x)``, by Taylor series near 0."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = fb.where(out_unst_reg, x, (self._lims[0] - 0.5) * fb.ones_like(x))
        log_norm = fb.log(fb.abs(fb.exp(cut_nat_params) - 1.0)) - fb.log(fb.abs(cut_nat_params))
        taylor = 0.5 * x + fb.pow(x, 2) / 24.0 - fb.pow(x, 4) / 2880.0
        return fb.where(out_unst_reg, log_norm, taylor)

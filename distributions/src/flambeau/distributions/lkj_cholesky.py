"""The LKJ distribution over Cholesky factors of correlation matrices."""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution for lower Cholesky factors ``L`` of ``dim x dim`` correlation matrices: the
    correlation matrix ``L L^T`` has density proportional to ``det(L L^T)^(concentration - 1)``
    (Lewandowski, Kurowicka and Joe, 2009). Sampled by the onion method.

    Args:
        dim (int): dimension of the matrices (at least 2).
        concentration (float or Tensor): concentration/shape parameter (eta, positive).
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = tuple(self.concentration.size())
        event_shape = (dim, dim)
        # This is used to draw vectorized samples from the beta distribution in Sec. 3.2 of [1].
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = fb.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = fb.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5  # row i has i free coordinates: y_i ~ Beta(i / 2, beta_i)
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LKJCholesky":
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = fb.Size(tuple(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        # The onion method: row i of L is sqrt(y_i) times a uniform direction in its first i coordinates,
        # with y_i ~ Beta(i / 2, marginal concentration - i / 2), then a diagonal completing the unit norm.
        with fb.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u_normal = fb.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norms = u_normal.norm(dim=-1, keepdim=True)
            # Row 0 has no free coordinates: its direction is the zero vector.
            u_hypersphere = u_normal / fb.where(norms > 0, norms, 1.0)
            w = fb.sqrt(y) * u_hypersphere
            # Fill diagonal elements; clamp for numerical stability
            eps = fb.finfo(w.dtype).tiny
            diag_elems = fb.clamp(1 - fb.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + fb.diag_embed(diag_elems)

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        # The density of L (not of L L^T): prod_{i>=2} L_ii^(2 (eta - 1) + dim - i), normalised
        # (Eq. 16 of Lewandowski et al. with the Jacobian of the Cholesky map).
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = fb.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = fb.sum(order * fb.log(diag_elems), dim=-1)
        # Compute normalization constant (page 1999 of [1])
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = fb.lgamma(alpha) * dm1
        numerator = fb.mvlgamma(alpha - 0.5, dm1)
        # pi_constant in [1] is D * (D - 1) / 4 * log(pi)
        # pi_constant in multigammaln is (D - 1) * (D - 2) / 4 * log(pi)
        # hence, we need to add a pi_constant = (D - 1) * log(pi) / 2
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term

"""Composite implementations of flambeau-distributions' sampling ops, written with flambeau ops so that
every backend runs them (a backend may register a faster kernel under the same op name).

- ``dist_standard_gamma(alpha)``: Gamma(alpha, 1) draws by Marsaglia and Tsang's squeeze-rejection
  method (2000), with the ``alpha < 1`` boost ``G(alpha) = G(alpha + 1) * U ** (1 / alpha)``.
- ``dist_standard_gamma_grad(alpha, sample)``: the implicit reparameterisation gradient
  ``d sample / d alpha = -(dP(alpha, x) / d alpha) / p(x; alpha)`` (Figurnov et al., 2018), with ``P``
  the regularised lower incomplete gamma function (the CDF) and ``p`` the density.
- ``dist_poisson(rate)``: Poisson(rate) draws through the core ``poisson`` op.
- ``dist_binomial(count, prob)``: Binomial(count, prob) draws as counts of uniforms below ``prob``.
"""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

#: Relative step of the central difference of the incomplete gamma function in ``alpha``.
_ALPHA_STEP = 1e-5
#: Binomial trials drawn per pass (bounds the temporary memory to ``numel * _TRIALS_PER_PASS``).
_TRIALS_PER_PASS = 64


def standard_gamma(alpha: fb.Tensor, generator: Any = None) -> fb.Tensor:
    """Gamma(alpha, 1) samples, one per element of ``alpha`` (float; alpha > 0 where it is finite).

    The dispatcher records no node for a composite, so the implicit gradient is attached here:
    ``x + (alpha - alpha.detach()) * dx/dalpha`` has the value ``x`` exactly and the derivative
    ``dx/dalpha`` (a backend kernel gets the op's registered formula instead).
    """
    x = _standard_gamma_draws(alpha.detach(), generator)
    if not (alpha.requires_grad and fb.is_grad_enabled()):
        return x
    with fb.no_grad():
        dx_dalpha = standard_gamma_grad(alpha.detach(), x)
    return x + (alpha - alpha.detach()) * dx_dalpha


def _standard_gamma_draws(alpha: fb.Tensor, generator: Any = None) -> fb.Tensor:
    """Marsaglia and Tsang's sampler, vectorised: each pass draws only for the still-rejected elements
    (at least 95% are accepted per pass, so ~log(numel) / 3 passes, all but the first tiny)."""
    shape, dtype, device = tuple(alpha.shape), alpha.dtype, alpha.device
    with fb.no_grad():
        given = alpha.reshape(-1)
        # As the CPU kernel and PyTorch: an alpha that is not positive (or NaN) gives the dtype's tiny and
        # an infinite one infinity; both are drawn with alpha = 1 (never accepted otherwise: NaN tests).
        drawable = (given > 0) & (given < math.inf)
        flat_alpha = fb.where(drawable, given, 1.0)
        boosted = flat_alpha < 1
        a = fb.where(boosted, flat_alpha + 1, flat_alpha)
        d = a - 1.0 / 3.0
        c = (9.0 * d).rsqrt()
        out = fb.zeros(flat_alpha.shape, dtype=dtype, device=device)
        pending = fb.arange(flat_alpha.numel(), device=device)
        while pending.numel():
            dp, cp = d[pending], c[pending]
            k = (pending.numel(),)
            x = fb.randn(k, dtype=dtype, device=device, generator=generator)
            u = fb.rand(k, dtype=dtype, device=device, generator=generator)
            v = (1 + cp * x) ** 3
            positive = v > 0
            log_v = fb.where(positive, v, 1.0).log()
            accept = positive & (u.log() < 0.5 * x * x + dp - dp * v + dp * log_v)
            out[pending[accept]] = (dp * v)[accept]
            pending = pending[~accept]
        u = fb.rand(flat_alpha.shape, dtype=dtype, device=device, generator=generator)
        # In logs: U ** (1 / alpha) underflows for small alpha long before the product does.
        boost = fb.where(boosted, u.log() / fb.where(boosted, flat_alpha, 1.0), 0.0)
        out = fb.where(boosted, (out.log() + boost).exp(), out)
        out = fb.where(drawable, out, fb.where(given == math.inf, math.inf, 0.0))
        return out.clamp(min=fb.finfo(dtype).tiny).reshape(shape)


def standard_gamma_grad(alpha: fb.Tensor, sample: fb.Tensor) -> fb.Tensor:
    """``d sample / d alpha`` at fixed CDF value, computed in float64.

    ``dP/d alpha`` is a central difference of the regularised incomplete gamma function: of ``P`` left of
    the mode and of ``Q = 1 - P`` right of it, so that the difference is taken where the function is
    small and keeps its relative precision in both tails.
    """
    a = alpha.to(fb.float64).reshape(-1)
    x = sample.to(fb.float64).reshape(-1)
    h = a * _ALPHA_STEP
    left = x < a
    dp_dalpha = fb.zeros(a.shape, dtype=fb.float64, device=a.device)
    # P left of the mode, -Q right of it: each element evaluates only the one it needs
    for where, fn, sign in ((left.nonzero().reshape(-1), fb.igamma, 1.0),
                            ((~left).nonzero().reshape(-1), fb.igammac, -1.0)):
        if where.numel():
            ai, xi, hi = a[where], x[where], h[where]
            dp_dalpha[where] = sign * (fn(ai + hi, xi) - fn(ai - hi, xi)) / (2 * hi)
    log_pdf = (a - 1) * x.log() - x - fb.lgamma(a)
    grad = -dp_dalpha * (-log_pdf).exp()
    return grad.to(alpha.dtype).reshape(tuple(alpha.shape))


def poisson(rate: fb.Tensor, generator: Any = None) -> fb.Tensor:
    """Poisson(rate) samples (rate >= 0) in ``rate``'s dtype: the core ``poisson`` op (a backend may
    register a kernel for ``dist_poisson`` instead, as the CPU backend does in C++)."""
    with fb.no_grad():
        return fb.poisson(rate, generator=generator)


def binomial(count: fb.Tensor, prob: fb.Tensor, generator: Any = None) -> fb.Tensor:
    """Binomial(count, prob) samples (count a whole number >= 0, prob in [0, 1]) in ``prob``'s dtype."""
    count, prob = fb.broadcast_tensors(count, prob)
    shape = tuple(prob.shape)
    with fb.no_grad():
        out = fb.zeros(shape, dtype=prob.dtype, device=prob.device)
        max_count_value = float(count.max().item()) if count.numel() else 0.0
        if not math.isfinite(max_count_value):
            raise RuntimeError(f"dist_binomial: count must be finite, got {max_count_value}")
        max_count = int(max_count_value)
        p = prob.unsqueeze(-1)
        n = count.unsqueeze(-1)
        for start in range(0, max_count, _TRIALS_PER_PASS):
            k = min(_TRIALS_PER_PASS, max_count - start)
            trial = fb.arange(start, start + k, dtype=prob.dtype, device=prob.device)
            u = fb.rand(shape + (k,), dtype=prob.dtype, device=prob.device, generator=generator)
            success = (u < p) & (trial + 1 <= n)  # floor(count) trials, as the CPU kernel
            out = out + success.to(prob.dtype).sum(-1)
        return out

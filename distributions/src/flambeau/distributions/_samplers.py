"""Composite implementations of flambeau-distributions' sampling ops, written with flambeau ops so that
every backend runs them (a backend may register a faster kernel under the same op name).

- ``dist_standard_gamma(alpha)``: Gamma(alpha, 1) draws by Marsaglia and Tsang's squeeze-rejection
  method (2000), with the ``alpha < 1`` boost ``G(alpha) = G(alpha + 1) * U ** (1 / alpha)``.
- ``dist_standard_gamma_grad(alpha, sample)``: the implicit reparameterisation gradient
  ``d sample / d alpha = -(dP(alpha, x) / d alpha) / p(x; alpha)`` (Figurnov et al., 2018), with ``P``
  the regularised lower incomplete gamma function (the CDF) and ``p`` the density: a series below the
  mode, a continued fraction above it, an asymptotic expansion for large alpha, all elementwise
  (no incomplete gamma function, so backends with only the core tier run it).
- ``dist_poisson(rate)``: Poisson(rate) draws through the core ``poisson`` op.
- ``dist_binomial(count, prob)``: Binomial(count, prob) draws as counts of uniforms below ``prob``.
"""
from __future__ import annotations

import math
from typing import Any

import flambeau as fb

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
    """``d sample / d alpha`` at fixed CDF value, ``-(dP(alpha, x) / d alpha) / p(x; alpha)``, in float64.

    The CPU kernel's three formulas, vectorised over the whole tensor on elementwise ops (each runs on
    every element, the others' given harmless stand-ins, and the right one is selected):

    - below the mode (``x < alpha + 1``) the series ``-x sum_n t_n (log x - psi(alpha + n + 1))``,
      ``t_0 = 1 / alpha``, ``t_n = t_(n-1) x / (alpha + n)``, whose terms share one sign;
    - above it, ``(x / K) (log x - psi(alpha) - K' / K)`` from the continued fraction ``K`` of the
      upper incomplete gamma function and its derivative in ``alpha``, by the convergents' recurrences;
    - for ``alpha > 1e3``, Temme's uniform expansion (DLMF 8.12) held at fixed ``Q``, relative error
      ``O(alpha^-2)``.

    Both sums run until every element's last term is below the result dtype's precision (1e-15
    relative for float64, 1e-9 otherwise). NaN unless alpha and the sample are positive and finite,
    except a zero sample (0): PyTorch's conventions.
    """
    a = alpha.to(fb.float64).reshape(-1)
    x = sample.to(fb.float64).reshape(-1)
    tol = 1e-15 if alpha.dtype == fb.float64 else 1e-9
    valid = (a > 0) & (a < math.inf) & (x == x) & (x.abs() < math.inf)
    regular = valid & (x > 0)
    asymptotic = regular & (a > _ASYMPTOTIC_ALPHA)
    below = regular & ~asymptotic & (x < a + 1.0)
    above = regular & ~asymptotic & ~below
    series = _grad_series(fb.where(below, a, 1.0), fb.where(below, x, 0.5), tol)
    fraction = _grad_fraction(fb.where(above, a, 1.0), fb.where(above, x, 3.0), tol)
    expansion = _grad_asymptotic(fb.where(asymptotic, a, 2e3), fb.where(asymptotic, x, 2.1e3))
    grad = fb.where(below, series, fb.where(above, fraction, expansion))
    grad = fb.where(regular, grad, fb.where(valid, 0.0, math.nan))
    return grad.to(alpha.dtype).reshape(tuple(alpha.shape))


#: Past this alpha the uniform expansion is used (the series and the fraction need O(sqrt(alpha)) terms).
_ASYMPTOTIC_ALPHA = 1e3
#: Sum terms between two convergence checks (each check reads one number back from the device).
_CHECK_EVERY = 8
#: A bound on the terms (the CPU kernel's is 1e6): float64 converges within a few hundred for alpha <= 1e3.
_MAX_TERMS = 100_000


def _digamma_positive(a: fb.Tensor) -> fb.Tensor:
    """psi(a) for a > 0 (up to ~1e3): six steps of the recurrence, then the asymptotic series."""
    num, den = a * 0.0, a * 0.0 + 1.0
    for _ in range(6):
        num = num * a + den
        den = den * a
        a = a + 1.0
    r = 1.0 / (a * a)
    series = r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132
                                                                                   - r * (691.0 / 32760))))))
    return a.log() - 0.5 / a - series - num / den


def _all(mask: fb.Tensor) -> bool:
    return mask.numel() == 0 or int((~mask).sum().item()) == 0


def _grad_series(a: fb.Tensor, x: fb.Tensor, tol: float) -> fb.Tensor:
    log_x = x.log()
    t = 1.0 / a
    psi = _digamma_positive(a + 1.0)
    total = t * (log_x - psi)
    done = a != a  # all False
    n = 0
    while not _all(done) and n < _MAX_TERMS:
        for _ in range(_CHECK_EVERY):
            n += 1
            inv = 1.0 / (a + n)
            t = t * x * inv
            psi = psi + inv
            term = t * (log_x - psi)
            total = fb.where(done, total, total + term)
            done = done | ((term.abs() <= tol * total.abs()) & (a + n > x))
    return -x * total


def _grad_fraction(a: fb.Tensor, x: fb.Tensor, tol: float) -> fb.Tensor:
    zero = a * 0.0
    A_prev, B_prev, dA_prev, dB_prev = zero + 1.0, zero, zero, zero
    A, B, dA, dB = x + 1.0 - a, zero + 1.0, zero - 1.0, zero
    K, dK = A, dA
    done = a != a
    n = 0
    while not _all(done) and n < _MAX_TERMS:
        for _ in range(_CHECK_EVERY):
            n += 1
            an, bn = (a - n) * float(n), x + (2.0 * n + 1.0) - a  # a_n = -n (n - a)
            A_next, B_next = bn * A + an * A_prev, bn * B + an * B_prev
            dA_next = bn * dA - A + n * A_prev + an * dA_prev
            dB_next = bn * dB - B + n * B_prev + an * dB_prev
            A_prev, B_prev, dA_prev, dB_prev = A, B, dA, dB
            A, B, dA, dB = A_next, B_next, dA_next, dB_next
            # the convergents are ratios: rescale all eight alike where B grows large
            scale = fb.where(B.abs() > 1e100, 1.0 / B, 1.0)
            A, B, dA, dB = A * scale, B * scale, dA * scale, dB * scale
            A_prev, B_prev, dA_prev, dB_prev = A_prev * scale, B_prev * scale, dA_prev * scale, dB_prev * scale
            usable = B != 0
            inv_B = 1.0 / fb.where(usable, B, 1.0)
            K_new = A * inv_B
            dK_new = (dA - K_new * dB) * inv_B
            step = usable & ~done
            close = ((K_new - K).abs() <= tol * K_new.abs()) & ((dK_new - dK).abs() <= tol * dK_new.abs())
            K, dK = fb.where(step, K_new, K), fb.where(step, dK_new, dK)
            done = done | (step & close)
    return (x / K) * (x.log() - _digamma_positive(a) - dK / K)


def _grad_asymptotic(a: fb.Tensor, x: fb.Tensor) -> fb.Tensor:
    delta, lam = (x - a) / a, x / a
    magnitude = (2.0 * (delta - delta.log1p())).clamp(min=0.0).sqrt()
    eta = fb.where(delta < 0, -magnitude, magnitude)
    near = eta.abs() < 1e-3
    safe_delta = fb.where(near, 1.0, delta)
    safe_eta = fb.where(near, 1.0, eta)
    g_far = safe_eta / safe_delta
    c0 = fb.where(near, -1.0 / 3 + eta * (1.0 / 12 - eta * (2.0 / 135)), 1.0 / safe_delta - 1.0 / safe_eta)
    dc0 = fb.where(near, 1.0 / 12 - eta * (4.0 / 135),
                   -lam * g_far / (safe_delta * safe_delta) + 1.0 / (safe_eta * safe_eta))
    g = fb.where(near, 1.0 + eta * c0, g_far)
    deta_da = -(0.5 * eta * g + c0 / (2.0 * a)) / (a * g - dc0)
    return lam + a * lam * g * deta_da


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

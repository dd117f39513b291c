"""Kernels for the sampling ops flambeau-distributions declares (``dist_standard_gamma``, ``dist_binomial``).

The backend never imports flambeau-distributions: it registers kernels under those op names, and they
are used only when that package is installed and declares the ops (its composites run elsewhere). Both
draw with numpy's compiled samplers (Marsaglia and Tsang's for the gamma, BTPE for the binomial) from
the given ``flambeau.Generator``'s engine, so ``flambeau.manual_seed`` reproduces them.

Values are checked before numpy sees them (numpy raises on a non-positive shape or an out-of-range
probability, and loops on huge counts): a gamma concentration that is not positive gives NaN, as
PyTorch's sampler does; a binomial count that is negative or not finite, or a probability outside
[0, 1], raises.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._random import engine

#: Above this, numpy's binomial sampler's int64 arithmetic is no longer exact.
_COUNT_MAX = float(2 ** 62)


def _tiny(dtype: np.dtype) -> float:
    """The smallest normal number of ``out``'s dtype (float32's for the half types, drawn as float32)."""
    try:
        return float(np.finfo(dtype).tiny)
    except ValueError:  # bfloat16 (ml_dtypes) has no numpy finfo
        return float(np.finfo(np.float32).tiny)


def dist_standard_gamma(alpha: np.ndarray, generator: Any, out: np.ndarray) -> None:
    a = np.asarray(alpha, dtype=np.float64)
    valid = a > 0  # False for NaN too
    draws = engine(generator).standard_gamma(np.where(valid, a, 1.0))
    # Draws that underflow the output dtype become its tiny, so that log(sample) stays finite.
    np.copyto(out, np.where(valid, np.maximum(draws, _tiny(out.dtype)), np.nan), casting="unsafe")


def dist_binomial(count: np.ndarray, prob: np.ndarray, generator: Any, out: np.ndarray) -> None:
    n = np.asarray(count, dtype=np.float64)
    p = np.asarray(prob, dtype=np.float64)
    if n.size and not np.all((n >= 0) & (n < _COUNT_MAX)):
        raise RuntimeError("dist_binomial: count must be finite and non-negative")
    if p.size and not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError("dist_binomial: prob must be in [0, 1]")
    n, p = np.broadcast_arrays(n, p)
    # floor(count) trials, as the composite (a whole count is the distribution's own constraint)
    np.copyto(out, engine(generator).binomial(np.floor(n).astype(np.int64), p), casting="unsafe")


KERNELS = {"dist_standard_gamma": dist_standard_gamma, "dist_binomial": dist_binomial}

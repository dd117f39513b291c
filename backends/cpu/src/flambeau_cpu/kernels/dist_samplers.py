"""Kernels for the sampling ops flambeau-distributions declares (``dist_standard_gamma``,
``dist_standard_gamma_grad``, ``dist_poisson``, ``dist_binomial``), in C++ (``csrc/dist_samplers.cpp``).

The backend never imports flambeau-distributions: it registers kernels under those op names, and they
are used only when that package is installed and declares the ops (its composites run elsewhere).

Draws come from the given ``flambeau.Generator`` (else the default one): element ``i`` of a call uses
Philox4x32-10 counter block ``offset + i`` under the generator's seed, and the call advances the
generator's offset by the number of elements, so ``flambeau.manual_seed`` reproduces them and the thread
count does not change them. The streams are flambeau's own: they equal neither numpy's nor PyTorch's.

- gamma: Marsaglia and Tsang's sampler with the ``alpha < 1`` boost. ``alpha == 0`` gives 0 and a
  negative or NaN ``alpha`` NaN; draws below the output dtype's smallest normal number become it, so
  ``log(sample)`` stays finite (PyTorch's conventions).
- its gradient ``d sample / d alpha`` at a fixed CDF value: exact series / continued fraction for
  ``alpha <= 1000``, Temme's uniform expansion above (see the C++ for the formulas).
- poisson: PTRS transformed rejection (Hormann) from rate 10, multiplication of uniforms below; a
  negative or NaN rate raises PyTorch's error, rates beyond int64 give -2^63 as PyTorch's do.
- binomial: BTRS transformed rejection (Hormann) for ``n * min(p, 1 - p) >= 10``, inversion below; a
  count that is negative or not finite, or a probability outside [0, 1], raises before any draw.

float16 and bfloat16 are computed in float32 and rounded once.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._C import dist_binomial as _binomial
from .._C import dist_poisson as _poisson
from .._C import dist_standard_gamma as _gamma
from .._C import dist_standard_gamma_grad as _gamma_grad
from .._random import DEFAULT

#: Counts above 2^53 are not whole numbers in float64; the samplers' arithmetic needs them exact.
_COUNT_MAX = float(2 ** 53)


def _work_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)


def _into(out: np.ndarray, result: np.ndarray) -> None:
    if result is not out:
        np.copyto(out, result, casting="unsafe")


def _scratch(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``out`` itself when the C++ can write it directly, else a C-contiguous buffer of ``dtype``."""
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dtype)


def _philox(generator: Any, n: int) -> tuple[int, int]:
    """The key and first counter block for ``n`` elements, reserved on the generator."""
    gen = DEFAULT if generator is None else generator._native
    return gen._seed, gen.take_blocks(n)


def dist_standard_gamma(alpha: np.ndarray, generator: Any, out: np.ndarray) -> None:
    work = _work_dtype(out.dtype)
    a = np.ascontiguousarray(np.broadcast_to(alpha, out.shape), dtype=work)
    result = _scratch(out, work)
    key, first = _philox(generator, result.size)
    _gamma(a, result, key, first)
    _into(out, result)


def dist_standard_gamma_grad(alpha: np.ndarray, sample: np.ndarray, out: np.ndarray) -> None:
    work = _work_dtype(out.dtype)
    a = np.ascontiguousarray(np.broadcast_to(alpha, out.shape), dtype=work)
    x = np.ascontiguousarray(np.broadcast_to(sample, out.shape), dtype=work)
    result = _scratch(out, work)
    _gamma_grad(a, x, result)
    _into(out, result)


def dist_poisson(rate: np.ndarray, generator: Any, out: np.ndarray) -> None:
    r = np.ascontiguousarray(np.broadcast_to(np.asarray(rate, dtype=np.float64), out.shape))
    if r.size and not np.all(r >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    result = _scratch(out, _work_dtype(out.dtype))
    key, first = _philox(generator, result.size)
    _poisson(r, result, key, first)
    _into(out, result)


def dist_binomial(count: np.ndarray, prob: np.ndarray, generator: Any, out: np.ndarray) -> None:
    n = np.ascontiguousarray(np.broadcast_to(np.asarray(count, dtype=np.float64), out.shape))
    p = np.ascontiguousarray(np.broadcast_to(np.asarray(prob, dtype=np.float64), out.shape))
    if n.size and not np.all((n >= 0) & (n <= _COUNT_MAX)):
        raise RuntimeError("dist_binomial: count must be finite and non-negative")
    if p.size and not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError("dist_binomial: prob must be in [0, 1]")
    result = _scratch(out, _work_dtype(out.dtype))
    key, first = _philox(generator, result.size)
    _binomial(n, p, result, key, first)
    _into(out, result)


KERNELS = {"dist_standard_gamma": dist_standard_gamma, "dist_standard_gamma_grad": dist_standard_gamma_grad,
           "dist_poisson": dist_poisson, "dist_binomial": dist_binomial}

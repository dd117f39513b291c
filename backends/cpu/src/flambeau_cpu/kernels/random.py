"""Random sampling kernels: uniform and normal fills in C++ (Philox, several threads), the other
distributions from numpy's Generator (PCG64); the dtype handling is ours.

Every kernel draws from the given ``flambeau.Generator``'s engine, or the CPU's default (``_random``).
Floating samples in [0, 1) are multiples of ``2**-digits`` of the output dtype, so a float16 or bfloat16
sample never rounds up to 1. Checks that need the values (``std >= 0``, probabilities
in [0, 1]) run before anything is written, so a failing in-place call leaves its tensor as it was.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .._random import DEFAULT, engine

try:
    from .._C import philox_fill as _philox_fill
except ImportError:  # a source checkout without the built extension: numpy draws everything
    _philox_fill = None

_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _digits(dtype: np.dtype) -> int:
    """Mantissa bits of a float dtype (``dtype.name`` costs microseconds in numpy 2: read it only off the fast path)."""
    return 24 if dtype == np.float32 else 53 if dtype == np.float64 else _DIGITS.get(dtype.name, 53)
_FAST = (np.dtype(np.float32), np.dtype(np.float64))  # the C++ fill writes these straight into ``out``


def _real_dtype(out: np.ndarray) -> np.dtype:
    return np.dtype(np.float32 if out.dtype == np.complex64 else np.float64) if out.dtype.kind == "c" else out.dtype


def _unit(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Uniform samples in [0, 1) on the grid of ``dtype``'s precision (float32 or float64 values)."""
    digits = _digits(dtype)
    if digits > 24:
        return rng.random(shape)
    values = rng.random(shape, dtype=np.float32)
    if digits < 24:
        scale = np.float32(2.0 ** digits)
        values = np.floor(values * scale) / scale
    return values


def _normal01(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float64 if dtype == np.float64 else np.float32)


def _store(out: np.ndarray, values: Any) -> None:
    np.copyto(out, values, casting="unsafe")


def _store_complex(out: np.ndarray, draw: Callable[[tuple], np.ndarray]) -> None:
    """A complex ``out``: real and imaginary parts drawn as two real samples each."""
    pairs = draw(out.shape + (2,))
    _store(out, pairs[..., 0] + 1j * pairs[..., 1])


# -- factories -------------------------------------------------------------------------------

def _bulk(gen, out: np.ndarray, a: float, b: float, normal: bool) -> None:
    """Uniform [a, b) or N(a, b) into a real float ``out`` of any layout, from Philox counter blocks.

    float16 and bfloat16 are drawn as float32 (uniforms first put on their own precision's grid, so
    that none rounds up to ``b``); a strided ``out`` gets a contiguous draw copied in, so that a seed
    gives a tensor and its transpose the same numbers.
    """
    wide = out.dtype if out.dtype in _FAST else np.dtype(np.float32)
    per = 2 if wide == np.float64 else 4
    first = gen.take_blocks((out.size + per - 1) // per)
    if out.dtype is wide and out.flags.c_contiguous:
        _philox_fill(out, gen._seed, first, a, b, normal)
        return
    digits = _digits(out.dtype)
    target = np.empty(out.shape, wide)
    if normal or digits >= 24:
        _philox_fill(target, gen._seed, first, a, b, normal)
        _store(out, target)
        return
    _philox_fill(target, gen._seed, first, 0.0, 1.0, False)
    scale = np.float32(2.0 ** digits)
    _store(out, a + (b - a) * (np.floor(target * scale) / scale))


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_MASK64 = (1 << 64) - 1


def rand(size, generator, dtype, device, requires_grad, out):
    gen = DEFAULT if generator is None else generator._native
    dt = out.dtype
    if (dt is _F32 or dt is _F64) and _philox_fill is not None and out.flags.c_contiguous:
        # _bulk's common case written out: rand of a few elements is mostly Python overhead
        first = gen.offset
        gen.offset = (first + (out.size + 3) // 4 if dt is _F32 else first + (out.size + 1) // 2) & _MASK64
        _philox_fill(out, gen._seed, first, 0.0, 1.0, False)
    elif _philox_fill is not None and dt.kind == "f":
        _bulk(gen, out, 0.0, 1.0, False)
    elif out.dtype.kind == "c":
        _store_complex(out, lambda shape: _unit(gen.numpy, shape, _real_dtype(out)))
    else:
        _store(out, _unit(gen.numpy, out.shape, out.dtype))


def _fill_normal(gen, out: np.ndarray, mean: float, std: float) -> None:
    """N(mean, std) into ``out`` (complex: each part N(mean, std**2 / 2))."""
    if out.dtype.kind == "c":
        scale = std * math.sqrt(0.5)
        _store_complex(out, lambda shape: mean + scale * _normal01(gen.numpy, shape, _real_dtype(out)))
    elif _philox_fill is not None:
        _bulk(gen, out, mean, std, True)
    else:
        values = _normal01(gen.numpy, out.shape, out.dtype)
        _store(out, values * std + mean if (mean, std) != (0.0, 1.0) else values)


def randn(size, generator, dtype, device, requires_grad, out):
    gen = DEFAULT if generator is None else generator._native
    dt = out.dtype
    if (dt is _F32 or dt is _F64) and _philox_fill is not None and out.flags.c_contiguous:
        first = gen.offset
        gen.offset = (first + (out.size + 3) // 4 if dt is _F32 else first + (out.size + 1) // 2) & _MASK64
        _philox_fill(out, gen._seed, first, 0.0, 1.0, True)
    else:
        _fill_normal(gen, out, 0.0, 1.0)


def _integers(rng: np.random.Generator, low: int, high_inclusive: int, out: np.ndarray) -> None:
    values = rng.integers(low, high_inclusive, size=out.shape, dtype=np.int64, endpoint=True)
    _store(out, values)


def randint(low, high, size, generator, dtype, device, requires_grad, out):
    _integers(engine(generator), int(low), int(high) - 1, out)


def randperm(n, generator, dtype, device, requires_grad, out):
    _store(out, engine(generator).permutation(n))


def normal_size(mean, std, size, generator, dtype, device, requires_grad, out):
    _fill_normal(DEFAULT if generator is None else generator._native, out, float(mean), float(std))


# -- samplers shaped like their inputs ------------------------------------------------------

def normal_tensor(mean, std, generator, out):
    scale = np.asarray(std, dtype=np.float64)  # compared in float64: bfloat16's NaN comparison warns
    if isinstance(std, np.ndarray) and std.size and not np.all(scale >= 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _normal01(engine(generator), out.shape, np.dtype(np.float64))
    _store(out, np.asarray(mean, dtype=np.float64) + scale * z)


def _probabilities(p: Any) -> np.ndarray:
    probs = np.asarray(p, dtype=np.float64)
    if probs.size and not np.all((probs >= 0) & (probs <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return probs


def bernoulli(input, p, generator, out):
    probs = _probabilities(input if p is None else p)
    gen = DEFAULT if generator is None else generator._native
    if _philox_fill is None:
        _store(out, gen.numpy.random(out.shape) < probs)
        return
    draws = np.empty(out.shape, np.float32)  # float32 uniforms (multiples of 2**-24): P(u < p) is p to 6e-8
    _bulk(gen, draws, 0.0, 1.0, False)
    np.less(draws, probs, out=out, casting="unsafe") if out.dtype.kind in "biuf" else _store(out, draws < probs)


def _check_rows(rows: np.ndarray, replacement: bool) -> None:
    if replacement:
        if np.any(rows < 0):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(rows)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    elif not np.all((rows >= 0) & (rows < np.inf)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement, generator, out):
    rows = np.asarray(input, dtype=np.float64).reshape(-1, input.shape[-1])
    _check_rows(rows, replacement)
    rng = engine(generator)
    count, categories = rows.shape
    if replacement:
        # One sorted array for all rows: row r's normalised CDF shifted up by r, so that a single
        # searchsorted finds every row's category for its uniforms (also shifted by r).
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        shifted = (cdf + np.arange(count)[:, None]).reshape(-1)
        draws = rng.random((count, num_samples)) + np.arange(count)[:, None]
        picked = np.searchsorted(shifted, draws.reshape(-1), side="right").reshape(count, num_samples)
        picked -= (np.arange(count) * categories)[:, None]
        # Rounding can leave a uniform just above a row's last CDF value: give it the last possible category.
        last = categories - 1 - np.argmax(rows[:, ::-1] > 0, axis=1)
        np.minimum(picked, last[:, None], out=picked)
    else:
        # Exponential races (Gumbel top-k): p / E with E ~ Exp(1); the num_samples largest keys win.
        keys = rows / rng.standard_exponential(rows.shape)
        picked = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    _store(out, picked.reshape(out.shape))


#: numpy's largest Poisson rate (its ``lam value too large`` past it). PyTorch samples such rates
#: (and inf) into an int64 that overflows: its result there is -2**63, as a float.
_POISSON_LAM_MAX = 9.223372006484771e18


def poisson(input, generator, out):
    rates = np.asarray(input, dtype=np.float64)
    if rates.size and not np.all(rates >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    huge = rates > _POISSON_LAM_MAX
    if huge.any():
        samples = engine(generator).poisson(np.where(huge, 0.0, rates)).astype(np.float64)
        _store(out, np.where(huge, float(-2 ** 63), samples))
        return
    _store(out, engine(generator).poisson(rates))


# -- in-place samplers (``out`` is the input itself for ``x.uniform_()`` and friends) -------------

def uniform(input, from_, to, generator, out):
    gen = DEFAULT if generator is None else generator._native
    low, high = float(from_), float(to)
    if out.dtype.kind == "c":
        span = high - low
        _store_complex(out, lambda shape: low + span * _unit(gen.numpy, shape, _real_dtype(out)))
    elif _philox_fill is not None:
        _bulk(gen, out, low, high, False)
    else:
        _store(out, low + (high - low) * _unit(gen.numpy, out.shape, out.dtype).astype(np.float64))


def normal(input, mean, std, generator, out):
    _fill_normal(DEFAULT if generator is None else generator._native, out, float(mean), float(std))


def cauchy(input, median, sigma, generator, out):
    with np.errstate(over="ignore"):  # heavy tails: float16 samples may be infinite, as PyTorch's
        _store(out, float(median) + float(sigma) * engine(generator).standard_cauchy(out.shape))


def exponential(input, lambd, generator, out):
    _store(out, engine(generator).standard_exponential(out.shape) / float(lambd))


def geometric(input, p, generator, out):
    _store(out, engine(generator).geometric(float(p), out.shape))


def log_normal(input, mean, std, generator, out):
    with np.errstate(over="ignore"):
        _store(out, np.exp(float(mean) + float(std) * engine(generator).standard_normal(out.shape)))


def _top_integer(dtype: np.dtype) -> int:
    """The largest integer ``random_()`` draws for a dtype: all of an integer dtype, ``2**digits`` for floats."""
    if dtype.kind == "b":
        return 1
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).max)
    return 2 ** _digits(dtype)


def random(input, from_, to, generator, out):
    high = _top_integer(out.dtype) if to is None else int(to) - 1
    _integers(engine(generator), int(from_), high, out)


KERNELS = {
    "rand": rand, "randn": randn, "randint": randint, "randperm": randperm, "normal_size": normal_size,
    "normal_tensor": normal_tensor, "bernoulli": bernoulli, "multinomial": multinomial, "poisson": poisson,
    "uniform": uniform, "normal": normal, "cauchy": cauchy, "exponential": exponential, "geometric": geometric,
    "log_normal": log_normal, "random": random,
}

"""Conformance cases for flambeau-distributions' ops (entry point ``flambeau.testing: distributions``).

The backend conformance kit (``pytest --pyargs flambeau.testing --flambeau-backend NAME``) runs them, so
that a backend's own kernels for these ops are checked like its core ones: the samplers' supports and
their reproducibility under a seed or a generator, and the gamma sampler's implicit gradient against a
reference written out again here (a central difference of scipy's regularised incomplete gamma function).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float32", "float64")
_LAYOUTS = (((6,), "contiguous"), ((3, 4), "transposed"), ((5,), "sliced"), ((), "contiguous"))


def _same_as_first(sample: Sample) -> str:
    return sample.args[0].dtype


def _shape_of(args: tuple) -> tuple:
    return tuple(np.broadcast_shapes(*(np.shape(a) for a in args if isinstance(a, np.ndarray))))


def _gamma_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout, low=0.05, high=8.0),)) for shape, layout in _LAYOUTS]


def _gamma_support(alpha: np.ndarray, *_: Any, **__: Any) -> tuple:
    return np.zeros(np.shape(alpha)), np.full(np.shape(alpha), np.inf)


def _gamma_errors():
    yield ErrorCase((Arg((3,), "int64"),), RuntimeError, "dist_standard_gamma: expected a floating-point alpha")


def _gamma_grad_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout, low=0.3, high=6.0), Arg(shape, "float64", "contiguous", low=0.2,
                                                                     high=5.0)))
            for shape, layout in _LAYOUTS[:3]] + [
        Sample((Arg((4,), dtype, values=[0.5, 2.0, 7.0, 30.0]), Arg((4,), "float64", values=[0.1, 2.5, 3.0, 35.0])))]


def _gamma_grad_ref(alpha: np.ndarray, sample: np.ndarray) -> np.ndarray:
    from scipy import special, stats

    a = np.asarray(alpha, dtype=np.float64)
    x = np.asarray(sample, dtype=np.float64)
    h = 1e-6 * a
    dp = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    return (-dp / stats.gamma(a).pdf(x)).astype(np.asarray(alpha).dtype)


def _gamma_grad_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((2,), "float32")), RuntimeError,
                    "alpha and sample must have the same shape")


def _poisson_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout, low=0.0, high=30.0),)) for shape, layout in _LAYOUTS]


def _poisson_support(rate: np.ndarray, *_: Any, **__: Any) -> tuple:
    return np.zeros(np.shape(rate)), np.full(np.shape(rate), np.inf), True


def _poisson_errors():
    yield ErrorCase((Arg((3,), "int64"),), RuntimeError, "dist_poisson: expected a floating-point rate")


def _counts(shape: tuple) -> Any:
    """Whole trial counts 0..6 (a 0-d sample gets 5)."""
    n = int(np.prod(shape)) if shape else 1
    values = (np.arange(n) % 7).astype(float)
    return values.reshape(shape).tolist() if shape else 5.0


def _binomial_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, values=_counts(shape)), Arg(shape, dtype, layout, low=0.0, high=1.0)))
            for shape, layout in _LAYOUTS]


def _binomial_support(count: np.ndarray, prob: np.ndarray, *_: Any, **__: Any) -> tuple:
    shape = _shape_of((count, prob))
    return np.zeros(shape), np.broadcast_to(np.asarray(count, dtype=np.float64), shape), True


def _binomial_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "int64")), RuntimeError,
                    "dist_binomial: expected a floating-point prob")


def cases() -> list[OpCase]:
    return [
        OpCase("dist_standard_gamma", _FLOATS, _gamma_samples, _gamma_support, _same_as_first, errors=_gamma_errors),
        OpCase("dist_standard_gamma_grad", _FLOATS, _gamma_grad_samples, _gamma_grad_ref, _same_as_first,
               errors=_gamma_grad_errors, tolerances={"float32": (1e-3, 1e-5), "float64": (1e-5, 1e-9)}),
        OpCase("dist_poisson", _FLOATS, _poisson_samples, _poisson_support, _same_as_first, errors=_poisson_errors),
        OpCase("dist_binomial", _FLOATS, _binomial_samples, _binomial_support, _same_as_first,
               errors=_binomial_errors),
    ]

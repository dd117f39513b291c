"""Random sampling onto the core tier's two sources: ``uniform`` (floats in [from, to)) and
``random`` (integers), with elementwise transforms (inverse CDFs, Box-Muller)."""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype


def _uniform(shape: Any, like_dtype: Any, device: Any, generator: Any) -> Tensor:
    """Uniform floats in [0, 1), drawn in float64 unless the result is float32-or-narrower."""
    from ... import _dtypes
    from ..._creation import empty

    dt = _dtypes.float64 if like_dtype is _dtypes.float64 else _dtypes.float32
    return op("uniform")(empty(tuple(shape), dtype=dt, device=device), 0.0, 1.0, generator=generator)


def _standard_normal(shape: Any, dt: Any, device: Any, generator: Any) -> Tensor:
    """Box-Muller: ``sqrt(-2 log(1 - u1)) cos(2 pi u2)``; 1 - u1 is in (0, 1], so the log is finite."""
    u1 = _uniform(shape, dt, device, generator)
    u2 = _uniform(shape, dt, device, generator)
    return op("sqrt")(op("log")(1 - u1) * -2) * op("cos")(u2 * (2 * math.pi))


@decomposition("rand", "uniform to_dtype")
def _rand(size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    dt = result_dtype("rand", size, generator, dtype, device, requires_grad)
    return _uniform(size, dt, device, generator)


@decomposition("randn", "uniform log sub mul sqrt cos to_dtype")
def _randn(size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    dt = result_dtype("randn", size, generator, dtype, device, requires_grad)
    return _standard_normal(size, dt, device, generator)


@decomposition("randint", "random")
def _randint(low: int, high: int, size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    from ..._creation import empty

    dt = result_dtype("randint", low, high, size, generator, dtype, device, requires_grad)
    return op("random")(empty(tuple(size), dtype=dt, device=device), low, high, generator=generator)


@decomposition("normal", "uniform log sub mul sqrt cos add view_as_complex to_dtype")
def _normal(x: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    if x._dtype.is_complex:  # each part normal, with the variance split between them, as PyTorch
        parts = _standard_normal(tuple(x._data.shape) + (2,), _real(x._dtype), x._device, generator)
        parts = as_dtype(parts, _real(x._dtype)) * (std / math.sqrt(2)) + mean
        return op("view_as_complex")(parts)
    return _standard_normal(x._data.shape, x._dtype, x._device, generator) * std + mean


def _real(dt: Any) -> Any:
    from ... import _dtypes

    return _dtypes.float64 if dt is _dtypes.complex128 else _dtypes.float32


@decomposition("normal_size", "uniform log sub mul sqrt cos add to_dtype")
def _normal_size(mean: float, std: float, size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
    dt = result_dtype("normal_size", mean, std, size, generator, dtype, device, requires_grad)
    return _standard_normal(size, dt, device, generator) * std + mean


@decomposition("normal_tensor", "uniform log sub mul sqrt cos add lt sum to_dtype")
def _normal_tensor(mean: Any, std: Any, generator: Any = None) -> Tensor:
    if isinstance(std, Tensor) and std.numel() and bool(op("sum")(std < 0).item()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    spec = _spec("normal_tensor", mean, std, generator)
    like = mean if isinstance(mean, Tensor) else std
    return _standard_normal(spec[0], spec[1], like._device, generator) * std + mean


def _spec(name: str, *args: Any) -> Any:
    from ...ops._registry import OPS

    return OPS[name].meta(*args)


@decomposition("bernoulli", "uniform lt gt bitwise_or sum to_dtype")
def _bernoulli(x: Tensor, p: Any = None, generator: Any = None) -> Tensor:
    p = x if p is None else p
    if isinstance(p, Tensor) and p.numel() and bool(op("sum")((p < 0) | (p > 1)).item()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true")
    return _uniform(x._data.shape, x._dtype, x._device, generator) < p


@decomposition("exponential", "uniform log1p neg div to_dtype")
def _exponential(x: Tensor, lambd: float = 1.0, generator: Any = None) -> Tensor:
    u = _uniform(x._data.shape, x._dtype, x._device, generator)
    return -op("log1p")(-u) / lambd  # u in [0, 1): -log(1 - u) is finite and >= 0


@decomposition("cauchy", "uniform sub mul tan add to_dtype")
def _cauchy(x: Tensor, median: float = 0.0, sigma: float = 1.0, generator: Any = None) -> Tensor:
    u = _uniform(x._data.shape, x._dtype, x._device, generator)
    return op("tan")((u - 0.5) * math.pi) * sigma + median


@decomposition("log_normal", "uniform log sub mul sqrt cos add exp to_dtype")
def _log_normal(x: Tensor, mean: float = 1.0, std: float = 2.0, generator: Any = None) -> Tensor:
    return op("exp")(_standard_normal(x._data.shape, x._dtype, x._device, generator) * std + mean)


@decomposition("geometric", "uniform sub log div floor add to_dtype")
def _geometric(x: Tensor, p: float, generator: Any = None) -> Tensor:
    u = 1 - _uniform(x._data.shape, x._dtype, x._device, generator)  # in (0, 1]
    return op("floor")(op("log")(u) / math.log1p(-p)) + 1 if p < 1 else u * 0 + 1

"""Host decompositions: ops with no reasonable formulation on the core tier (sorting and what
is built on it, cumulative products), computed by numpy on a copy brought to the host and
copied back. They are counted apart (``coverage`` says ``"host"``): each costs two transfers,
and the result has no autograd history (a backend that wants gradients through them, or
speed, writes the kernel).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from . import decomposition
from ._util import result_dtype


def _to_host(t: Tensor) -> np.ndarray:
    from ...ops._registry import TABLES

    return TABLES[t._device.type].backend.to_numpy(t._data)


def _from_host(array: np.ndarray, dt: Any, device: Any) -> Tensor:
    from ..._tensor import wrap
    from ...ops._registry import TABLES

    host = np.array(array, dtype=dt.numpy_dtype, order="C", copy=True)  # (0-d stays 0-d)
    return wrap(TABLES[device.type].backend.from_numpy(host, device), dt, device)


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``axis``: NaN last ascending and first descending, equal
    elements in their input order either way (PyTorch's stable sort)."""
    if x.dtype.name in ("bfloat16", "float16"):
        x = x.astype(np.float32)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]  # ascending order of the reversed input, reversed: stable, NaN first
    return (n - 1) - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _sorted(x: Tensor, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    host = _to_host(x)
    if host.ndim == 0:
        return host, np.zeros((), np.int64)
    axis = dim % host.ndim
    order = _order(host, axis, bool(descending))
    return np.take_along_axis(host, order, axis), order


@decomposition("sort", "to_dtype", host=True)
def _sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> tuple:
    from ... import _dtypes

    values, order = _sorted(x, dim, descending)
    return _from_host(values, x._dtype, x._device), _from_host(order, _dtypes.int64, x._device)


@decomposition("argsort", "to_dtype", host=True)
def _argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    from ... import _dtypes

    return _from_host(_sorted(x, dim, descending)[1], _dtypes.int64, x._device)


@decomposition("msort", "to_dtype", host=True)
def _msort(x: Tensor) -> Tensor:
    return _from_host(_sorted(x, 0, False)[0], x._dtype, x._device)


@decomposition("topk", "to_dtype", host=True)
def _topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple:
    from ... import _dtypes

    values, order = _sorted(x, dim, largest)
    if values.ndim:
        axis = dim % values.ndim
        values, order = np.take(values, np.arange(k), axis), np.take(order, np.arange(k), axis)
    return _from_host(values, x._dtype, x._device), _from_host(order, _dtypes.int64, x._device)


@decomposition("cumprod", "to_dtype", host=True)
def _cumprod(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    dt = result_dtype("cumprod", x, dim, dtype)
    host = _to_host(x)
    work = np.float32 if dt.name in ("float16", "bfloat16") else dt.numpy_dtype
    if host.ndim == 0:
        return _from_host(host.astype(work), dt, x._device)
    with np.errstate(all="ignore"):
        return _from_host(np.cumprod(host.astype(work), axis=dim % host.ndim), dt, x._device)


@decomposition("randperm", "uniform to_dtype", host=True)
def _randperm(n: int, generator: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """The order of ``n`` uniform keys drawn on the device (so that the device's seed decides it)."""
    from ... import _dtypes
    from ..._creation import empty
    from ...ops._dispatch import factory_device
    from ...ops._registry import FUNCTIONS

    dt = result_dtype("randperm", n, generator, dtype, device, requires_grad)
    dev = factory_device(device)
    keys = FUNCTIONS["uniform"](empty((n,), dtype=_dtypes.float64, device=dev), 0.0, 1.0, generator=generator)
    return _from_host(np.argsort(_to_host(keys), kind="stable"), dt, dev)

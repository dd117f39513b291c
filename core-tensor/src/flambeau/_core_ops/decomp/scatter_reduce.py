"""``scatter_reduce`` and ``index_reduce`` on the host.

The core tier scatters with ``scatter`` (last write wins) and ``scatter_add``: ``sum`` and ``mean``
could be built on ``scatter_add``, but ``amax``, ``amin`` and ``prod`` cannot be made exact without
a per-position sort of the colliding values, so all reduces go through numpy's unbuffered
``ufunc.at`` on a host copy (repeated indices all count, in index order, as in PyTorch's CPU
loop). ``mean`` divides by the number of values combined (the input's own one included with
``include_self``), rounding down for integral dtypes, as PyTorch does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from . import decomposition
from .host import _from_host, _to_host

_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a position starts from when ``include_self=False`` drops the input's own."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _work(x: np.ndarray) -> np.ndarray:
    """A writable copy to reduce into (half types in float32; rounded back once at the end)."""
    return x.astype(np.float32) if x.dtype.name in ("bfloat16", "float16") else np.array(x, copy=True)


def _reduce(x: Tensor, key: tuple, values: np.ndarray, reduce: str, include_self: bool) -> Tensor:
    out = _work(_to_host(x))
    if out.ndim == 0:  # a 0-d destination: one position, keyed as a 1-element vector
        out = out.reshape(1)
    values = values.astype(out.dtype, copy=False)
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    with np.errstate(all="ignore"):  # NaN propagates through amax/amin, integers wrap: as the kernel
        _UFUNCS[reduce].at(out, key, values)
    if reduce == "mean":
        counts = np.zeros(out.shape, np.int64)
        np.add.at(counts, key, 1)
        counts += int(bool(include_self))
        np.maximum(counts, 1, out=counts)
        if out.dtype.kind in "iub":
            out = np.floor_divide(out, counts).astype(out.dtype)
        else:
            out = (out / counts).astype(out.dtype)
    return _from_host(out.reshape(x._data.shape), x._dtype, x._device)


def _grid(shape: tuple[int, ...], dim: int, along: np.ndarray) -> tuple:
    """Destination coordinates for every position of ``shape``: ``along`` on ``dim``, its own elsewhere."""
    key = []
    for k, n in enumerate(shape):
        if k == dim:
            key.append(along)
        else:
            key.append(np.arange(n).reshape([n if j == k else 1 for j in range(len(shape))]))
    return tuple(key)


@decomposition("scatter_reduce", "to_dtype", host=True)
def _scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                    include_self: bool = True) -> Tensor:
    idx = np.array(_to_host(index), dtype=np.int64).reshape(index._data.shape or (1,))
    ndim = max(x._data.ndim, 1)
    d = dim % ndim
    size = x._data.shape[d] if x._data.ndim else 1
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        bad = int(idx[(idx < 0) | (idx >= size)].flat[0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    values = _to_host(src).reshape(src._data.shape or (1,))
    values = values[tuple(slice(0, n) for n in idx.shape)]  # only src's leading block is read
    return _reduce(x, _grid(idx.shape, d, idx), values, reduce, include_self)


@decomposition("index_reduce", "to_dtype", host=True)
def _index_reduce(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                  include_self: bool = True) -> Tensor:
    idx = np.array(_to_host(index), dtype=np.int64).reshape(-1)
    ndim = max(x._data.ndim, 1)
    d = dim % ndim
    size = x._data.shape[d] if x._data.ndim else 1
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError("index out of range in self")
    values = _to_host(source).reshape(source._data.shape or (1,))
    along = idx.reshape([idx.size if j == d else 1 for j in range(values.ndim)])
    return _reduce(x, _grid(values.shape, d, along), values, reduce, include_self)

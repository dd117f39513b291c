"""numpy kernels for the index ops (gather/scatter, index_*, masks, take, nonzero).

Each kernel checks every index before it writes anything, so a bad index leaves ``out`` (and,
for the in-place forms, ``input``) as it was. What is checked is a private copy of the indices
(and of masks whose count sizes a result): numpy releases the GIL while it indexes, so another
thread could otherwise change an index between the check and its use (numpy's own check is a
separate pass too). The C++ kernels in :mod:`.index_ops` take over gather, scatter, scatter_add,
index_select and index_add where they are faster.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._int_scalars import fitted

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None


def as_1d(a: Any) -> Any:
    """0-d arrays seen as 1-d (PyTorch's index ops treat a scalar as one element)."""
    return a.reshape(1) if isinstance(a, np.ndarray) and a.ndim == 0 else a


def private(index: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
    """A copy of ``index`` that no other thread can reach: checked once, then trusted."""
    return np.array(index, dtype=dtype, copy=True)


def check_range(index: np.ndarray, size: int, dim: int, negative: bool = False,
                exc: type = RuntimeError, prefix: str = "") -> np.ndarray:
    """A private int64 copy of ``index``, every entry checked in ``[0, size)`` (``[-size, size)`` when
    ``negative``)."""
    index = private(index)
    if index.size == 0:
        return index
    low = -size if negative else 0
    lo, hi = int(index.min()), int(index.max())
    if lo < low or hi >= size:
        bad = index[(index < low) | (index >= size)]
        raise exc(f"{prefix}index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {size}")
    return index


def _scatter_key(dim: int, index: np.ndarray) -> tuple:
    """Coordinates in the destination for each element of ``index`` (its own position off ``dim``)."""
    key = []
    for k, n in enumerate(index.shape):
        if k == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[k] = n
            key.append(np.arange(n).reshape(shape))
    return tuple(key)


def _leading(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The corner of ``a`` with ``shape`` (the part of ``src`` that scatter reads)."""
    return a[tuple(slice(0, n) for n in shape)]


def _own(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``a``, copied when it shares memory with ``out`` (an index or mask read while ``out`` is written)."""
    return a.copy() if np.may_share_memory(a, out) else a


def _copy_in(out: np.ndarray, input: np.ndarray) -> None:
    if out is not input:
        np.copyto(out, input, casting="unsafe")


# -- gather and scatter ---------------------------------------------------------------------------

def gather(input, dim, index, sparse_grad, out):
    x, idx, o = as_1d(input), as_1d(index), as_1d(out)
    d = dim % x.ndim
    idx = check_range(idx, x.shape[d], d)
    corner = x[tuple(slice(None) if k == d else slice(0, n) for k, n in enumerate(idx.shape))]
    np.copyto(o, np.take_along_axis(corner, idx, axis=d), casting="unsafe")


def _identity(reduce: str, dtype: np.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum,
           "add": np.add, "multiply": np.multiply}


def reduce_into(o: np.ndarray, key: tuple, values: Any, reduce: str, include_self: bool,
                counts_shape_key: tuple | None = None) -> None:
    """Combines ``values`` into ``o[key]`` with ``reduce`` (repeated positions all count)."""
    if not include_self:
        o[key] = _identity(reduce, o.dtype)
    with np.errstate(invalid="ignore"):  # a NaN propagates through amax/amin as in PyTorch, silently
        _UFUNCS[reduce].at(o, key, values)
    if reduce == "mean":
        counts = np.zeros(o.shape, dtype=np.int64)
        np.add.at(counts, key, 1)
        if include_self:
            counts += 1
        np.maximum(counts, 1, out=counts)
        if o.dtype.kind in "iub":
            np.floor_divide(o, counts, out=o, casting="unsafe")
        else:
            np.divide(o, counts, out=o, casting="unsafe")


def scatter(input, dim, index, src, value, reduce, out):
    x, idx, o = as_1d(input), as_1d(index), as_1d(out)
    d = dim % x.ndim
    given = src if src is not None else value
    idx = check_range(idx, x.shape[d], d)
    values = _leading(as_1d(given), idx.shape) if isinstance(given, np.ndarray) else fitted(given, o.dtype)
    if isinstance(values, np.ndarray) and np.may_share_memory(values, o):
        values = values.copy()
    _copy_in(o, x)
    key = _scatter_key(d, idx)
    if reduce is None:
        o[key] = values
    else:
        with np.errstate(invalid="ignore"):  # inf * 0 or NaN: PyTorch gives NaN without a warning
            _UFUNCS[reduce].at(o, key, values)


def scatter_add(input, dim, index, src, out):
    scatter(input, dim, index, src, None, "add", out)


def scatter_reduce(input, dim, index, src, reduce, include_self, out):
    x, idx, o = as_1d(input), as_1d(index), as_1d(out)
    d = dim % x.ndim
    idx = check_range(idx, x.shape[d], d)
    values = _leading(as_1d(src), idx.shape)
    if np.may_share_memory(values, o):
        values = values.copy()
    _copy_in(o, x)
    reduce_into(o, _scatter_key(d, idx), values, reduce, include_self)


# -- index_* along a dim ---------------------------------------------------------------------------

def _along(dim: int, index: Any) -> tuple:
    return (slice(None),) * dim + (index,)


def check_select_range(index: np.ndarray, size: int) -> np.ndarray:
    """index_select's and index_add's check (on a private int64 copy, returned): PyTorch's IndexError
    for a negative index."""
    index = private(index)
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index[(index < 0) | (index >= size)].flat[0])
        if bad < 0:
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {bad} is out of bounds for dimension 0 with size {size}")
    return index


def index_select(input, dim, index, out):
    x, idx = as_1d(input), private(index.reshape(-1))
    d = dim % x.ndim
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= x.shape[d]):
        raise IndexError("index out of range in self")
    np.copyto(out, np.take(x, idx, axis=d).reshape(out.shape), casting="unsafe")


def _alpha_for(dtype: np.dtype, alpha: Any) -> Any:
    if dtype.kind in "iu" and isinstance(alpha, float):
        return int(alpha)  # PyTorch truncates a float alpha for integral tensors
    if dtype.kind == "b":
        return bool(alpha)
    return alpha


def index_add(input, dim, index, source, alpha, out):
    x, o, src, idx = as_1d(input), as_1d(out), as_1d(source), index.reshape(-1)
    d = dim % x.ndim
    idx = check_select_range(idx, x.shape[d])
    a = _alpha_for(o.dtype, alpha)
    values = src if a == 1 else src * np.asarray(a, dtype=src.dtype)
    if np.may_share_memory(values, o):
        values = values.copy()
    _copy_in(o, x)
    np.add.at(o, _along(d, idx), values)


def index_copy(input, dim, index, source, out):
    x, o, src, idx = as_1d(input), as_1d(out), as_1d(source), index.reshape(-1)
    d = dim % x.ndim
    idx = check_range(idx, x.shape[d], d, exc=IndexError, prefix="index_copy_(): ")
    if np.may_share_memory(src, o):
        src = src.copy()
    _copy_in(o, x)
    o[_along(d, idx)] = src


def index_fill(input, dim, index, value, out):
    x, o, idx = as_1d(input), as_1d(out), index.reshape(-1)
    d = dim % x.ndim
    idx = check_range(idx, x.shape[d], d, negative=True, exc=IndexError)
    fill = value[()] if isinstance(value, np.ndarray) else fitted(value, o.dtype)  # uint8 -1 -> 255
    _copy_in(o, x)
    o[_along(d, idx)] = fill


def index_reduce(input, dim, index, source, reduce, include_self, out):
    x, o, src, idx = as_1d(input), as_1d(out), as_1d(source), private(index.reshape(-1))
    d = dim % x.ndim
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= x.shape[d]):
        raise IndexError("index out of range in self")
    if np.may_share_memory(src, o):
        src = src.copy()
    _copy_in(o, x)
    # The ufunc's .at with an index along one dim: spell out that dim's coordinates for every element.
    shape = [1] * src.ndim
    shape[d] = idx.size
    key = tuple(idx.reshape(shape) if k == d else
                np.arange(n).reshape([n if j == k else 1 for j in range(src.ndim)])
                for k, n in enumerate(src.shape))
    reduce_into(o, key, src, reduce, include_self)


# -- masks ---------------------------------------------------------------------------------------

def fill_value(value: Any, dtype: np.dtype) -> np.ndarray:
    """masked_fill's value (a number or a 0-d array) as a 0-d array of ``dtype``, cast as numpy casts."""
    return np.asarray(value[()] if isinstance(value, np.ndarray) else value).astype(dtype)


def masked_fill(input, mask, value, out):
    if out is not input:
        np.copyto(out, np.broadcast_to(input, out.shape), casting="unsafe")
    np.copyto(out, fill_value(value, out.dtype), where=_own(np.broadcast_to(mask, out.shape), out))


def masked_scatter(input, mask, source, out):
    m = private(np.broadcast_to(mask, out.shape), bool)  # its count sizes what is read from source
    n = int(np.count_nonzero(m))
    if source.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    values = source.reshape(-1)[:n]
    if np.may_share_memory(values, out):
        values = values.copy()
    if out is not input:
        np.copyto(out, np.broadcast_to(input, out.shape), casting="unsafe")
    out[m] = values


def masked_select(input, mask):
    shape = np.broadcast_shapes(input.shape, mask.shape)
    if _C is not None and input.shape == shape == mask.shape and input.ndim:
        # one threaded compaction, safe against a racing writer; None: numpy's layout
        picked = _C.masked_select(input, mask)
        if picked is not None:
            return picked
    return np.ascontiguousarray(np.broadcast_to(input, shape)[private(np.broadcast_to(mask, shape), bool)])


# -- take, nonzero -------------------------------------------------------------------------------

def take(input, index, out):
    index = private(index)
    n = input.size
    if index.size:
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        lo, hi = int(index.min()), int(index.max())
        if lo < -n or hi >= n:
            bad = int(index[(index < -n) | (index >= n)].flat[0])
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    np.copyto(out, np.take(input, index), casting="unsafe")


def take_along_dim(input, indices, dim, out):
    if dim is None:
        flat = input.reshape(-1)
        idx = check_range(indices.reshape(-1), flat.size, 0)
        np.copyto(out, flat[idx], casting="unsafe")
        return
    x, idx, o = as_1d(input), as_1d(indices), as_1d(out)
    d = dim % x.ndim
    xs, js = list(x.shape), list(idx.shape)
    xs[d] = js[d] = 1
    both = np.broadcast_shapes(tuple(xs), tuple(js))
    x = np.broadcast_to(x, both[:d] + (x.shape[d],) + both[d + 1:])
    idx = np.broadcast_to(idx, both[:d] + (idx.shape[d],) + both[d + 1:])
    idx = check_range(idx, x.shape[d], d)
    np.copyto(o, np.take_along_axis(x, idx, axis=d), casting="unsafe")


def _nonzero_coords(input: np.ndarray) -> tuple:
    if input.ndim == 0:
        return (np.zeros(int(input != 0), dtype=np.int64),)
    return tuple(c.astype(np.int64, copy=False) for c in np.nonzero(input))


def nonzero(input, as_tuple):
    if as_tuple:
        return _nonzero_coords(input)
    return argwhere(input)


def argwhere(input):
    if input.ndim == 0:
        return np.zeros((int(input != 0), 0), dtype=np.int64)
    if _C is not None:
        coords = _C.nonzero(input)  # counts, then writes, in threads; None: numpy's layout or dtype
        if coords is not None:
            return coords
    return np.ascontiguousarray(np.stack(_nonzero_coords(input), axis=1)) if input.size else \
        np.zeros((0, input.ndim), dtype=np.int64)


KERNELS: dict[str, Callable[..., Any]] = {
    "gather": gather, "scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
    "index_select": index_select, "index_add": index_add, "index_copy": index_copy, "index_fill": index_fill,
    "index_reduce": index_reduce, "masked_fill": masked_fill, "masked_scatter": masked_scatter,
    "masked_select": masked_select, "take": take, "take_along_dim": take_along_dim, "nonzero": nonzero,
    "argwhere": argwhere,
}

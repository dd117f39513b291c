"""numpy kernels for the statistical reductions: nansum/nanmean, var/std, aminmax, median,
mode, quantile, logsumexp, norm, dist, count_nonzero, unique, bincount, histc.

The cumulative ops live in :mod:`.cumulative`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from flambeau.ops.sizes import allocation_error, checked_nbytes

from ._quiet import quiet_all
from .sorting import _C, _NATIVE_SORT, _run_lastdim, _sort_lastdim

_unique_dense = getattr(_C, "unique_dense_ints", None)

_median_lastdim = getattr(_C, "median_lastdim", None)
_logsumexp_lastdim = getattr(_C, "logsumexp_lastdim", None)

_LOW_PRECISION = ("float16", "bfloat16")


def _axis(input: np.ndarray, dim: Any) -> Any:
    """numpy's ``axis`` for a reduction's ``dim`` (None or an empty sequence: all dims)."""
    if dim is None or input.ndim == 0 or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    return dim if isinstance(dim, int) else tuple(dim)


def _store(out: np.ndarray, value: Any) -> None:
    np.copyto(out, np.asarray(value).reshape(out.shape), casting="unsafe")


def _wide(x: np.ndarray) -> np.ndarray:
    """Half-precision inputs are accumulated in float32 (numpy would accumulate in half)."""
    return x.astype(np.float32) if x.dtype.name in _LOW_PRECISION else x


def nansum(input, dim, keepdim, dtype, out):
    src = input if input.dtype.kind in "biu" else _wide(input)
    acc = out.dtype if out.dtype.kind in "iu" else None
    _store(out, np.nansum(src, axis=_axis(input, dim), keepdims=keepdim, dtype=acc))


def nanmean(input, dim, keepdim, dtype, out):
    src = _wide(input.astype(out.dtype) if dtype is not None else input)
    with np.errstate(all="ignore"), _quiet():
        _store(out, np.nanmean(src, axis=_axis(input, dim), keepdims=keepdim))


class _quiet:
    """Silences numpy's RuntimeWarnings (mean of an empty or all-NaN slice gives NaN, as in PyTorch)."""

    def __enter__(self) -> None:
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def _var(input, dim, correction, keepdim):
    ddof = 1 if correction is None else correction
    with np.errstate(all="ignore"), _quiet():
        return np.var(_wide(input), axis=_axis(input, dim), ddof=ddof, keepdims=keepdim)


def var(input, dim, correction, keepdim, out):
    _store(out, _var(input, dim, correction, keepdim))


def std(input, dim, correction, keepdim, out):
    _store(out, np.sqrt(_var(input, dim, correction, keepdim)))


def _mean(input, dim, keepdim):
    with np.errstate(all="ignore"), _quiet():
        return np.mean(_wide(input), axis=_axis(input, dim), keepdims=keepdim)


def var_mean(input, dim, correction, keepdim, out):
    _store(out[0], _var(input, dim, correction, keepdim))
    _store(out[1], _mean(input, dim, keepdim))


def std_mean(input, dim, correction, keepdim, out):
    _store(out[0], np.sqrt(_var(input, dim, correction, keepdim)))
    _store(out[1], _mean(input, dim, keepdim))


def aminmax(input, dim, keepdim, out):
    axis = _axis(input, dim)
    with np.errstate(invalid="ignore"):  # NaN propagates, as intended
        _store(out[0], np.amin(input, axis=axis, keepdims=keepdim))
        _store(out[1], np.amax(input, axis=axis, keepdims=keepdim))


# -- order statistics ------------------------------------------------------------------

def _rows(input: np.ndarray, dim: int) -> np.ndarray:
    """``input`` with ``dim`` moved last (0-d inputs become one row of one)."""
    return input.reshape(1) if input.ndim == 0 else np.moveaxis(input, dim, -1)


def _stable_order(rows: np.ndarray) -> np.ndarray:
    """Ascending indices along the last axis, NaN last, ties in their original order."""
    # ml_dtypes' bfloat16 sorts NaN out of place; float32 keeps every bfloat16 value and tie.
    keys = rows.astype(np.float32) if rows.dtype.name == "bfloat16" else rows
    return np.argsort(keys, axis=-1, kind="stable")


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if x.dtype.kind in "fc" or x.dtype.name == "bfloat16" else np.zeros(x.shape, bool)


def median(input, out):
    flat = input.reshape(-1)
    if flat.size == 0:
        out.fill(np.nan if out.dtype.kind == "f" or out.dtype.name == "bfloat16" else 0)
        return
    nan = _isnan(flat)
    if nan.any():
        out.fill(np.nan)
        return
    _store(out, np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


def nanmedian(input, out):
    flat = input.reshape(-1)
    keep = flat[~_isnan(flat)]
    if keep.size == 0:
        out.fill(np.nan if flat.size or out.dtype.kind == "f" else 0)
        return
    _store(out, np.partition(keep, (keep.size - 1) // 2)[(keep.size - 1) // 2])


def _select_rank(input, dim, keepdim, out, ranks: Callable[[np.ndarray], np.ndarray], nan_first: bool) -> None:
    """Values and indices of the element of rank ``ranks(rows)`` (per row) along ``dim``."""
    values, indices = out
    rows = _rows(input, dim)
    order = _stable_order(rows)
    rank = ranks(rows)
    index = np.take_along_axis(order, rank[..., None], axis=-1)[..., 0]
    if nan_first:
        nan = _isnan(rows)
        has_nan = nan.any(axis=-1)
        if has_nan.any():
            index = np.where(has_nan, np.argmax(nan, axis=-1), index)
    picked = np.take_along_axis(rows, index[..., None], axis=-1)[..., 0]
    if keepdim and input.ndim:
        picked, index = np.expand_dims(picked, dim), np.expand_dims(index, dim)
    _store(values, picked)
    _store(indices, index)


def _median_native(input, dim, keepdim, out, ignore_nan: bool) -> bool:
    """median/nanmedian along ``dim`` by the C++ row selection; False where it does not apply."""
    if input.ndim == 0 or input.shape[dim] == 0:
        return False
    values, indices = out
    if not keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return _run_lastdim(_median_lastdim, input, dim, 1, values, indices, bool(ignore_nan))


def median_dim(input, dim, keepdim, out):
    if _median_native(input, dim, keepdim, out, ignore_nan=False):
        return

    def ranks(rows):
        return np.full(rows.shape[:-1], (rows.shape[-1] - 1) // 2, np.int64)
    _select_rank(input, dim, keepdim, out, ranks, nan_first=True)


def nanmedian_dim(input, dim, keepdim, out):
    if _median_native(input, dim, keepdim, out, ignore_nan=True):
        return

    def ranks(rows):
        count = rows.shape[-1] - _isnan(rows).sum(axis=-1)
        return np.maximum(count - 1, 0) // 2
    _select_rank(input, dim, keepdim, out, ranks, nan_first=False)


def mode(input, dim, keepdim, out):
    values, indices = out
    rows = _rows(input, dim)
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)
    order = _stable_order(flat)
    ordered = np.take_along_axis(flat, order, axis=-1)
    # Runs of equal values in each sorted row: a run's length is read at its last element, and the
    # first longest run wins (the smallest of equally frequent values). The stable sort makes that
    # element the value's last occurrence in the input.
    positions = np.arange(n, dtype=np.int64)
    if n:
        change = ordered[:, 1:] != ordered[:, :-1]
        starts = np.concatenate([np.ones((flat.shape[0], 1), bool), change], axis=1)
        ends = np.concatenate([change, np.ones((flat.shape[0], 1), bool)], axis=1)
        run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
        lengths = np.where(ends, positions - run_start + 1, 0)
        end = np.argmax(lengths, axis=1)[:, None]
    else:
        end = np.zeros((flat.shape[0], 1), np.int64)
    best_value = np.take_along_axis(ordered, end, axis=1)[:, 0]
    best_index = np.take_along_axis(order, end, axis=1)[:, 0]
    picked, index = best_value.reshape(rows.shape[:-1]), best_index.reshape(rows.shape[:-1])
    if keepdim and input.ndim:
        picked, index = np.expand_dims(picked, dim), np.expand_dims(index, dim)
    _store(values, picked)
    _store(indices, index)


def _quantile(reduce: Callable[..., Any], name: str) -> Callable[..., Any]:
    def kernel(input, q, dim, keepdim, interpolation, out):
        qs = np.asarray(q, dtype=np.float64)
        if qs.size and (np.any(qs < 0) or np.any(qs > 1) or np.any(np.isnan(qs))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        axis = None if dim is None or input.ndim == 0 else dim
        with np.errstate(all="ignore"), _quiet():
            result = reduce(input.astype(np.float64), qs, axis=axis, keepdims=keepdim, method=interpolation)
        _store(out, result)
    return kernel


def _last_dim_only(input: np.ndarray, dim: Any) -> bool:
    dims = (dim,) if isinstance(dim, int) else tuple(dim or ())
    return input.ndim > 0 and len(dims) == 1 and dims[0] % input.ndim == input.ndim - 1


def logsumexp(input, dim, keepdim, out):
    if (_logsumexp_lastdim is not None and input.dtype == out.dtype and _last_dim_only(input, dim)
            and _logsumexp_lastdim(input, out)):
        return  # two vectorised passes per row in C++; False: numpy below
    axis = _axis(input, dim)
    x = input.astype(out.dtype) if input.dtype != out.dtype else _wide(input)
    if x.size == 0:
        with np.errstate(divide="ignore"):  # log(0) = -inf, the sum of nothing
            _store(out, np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdim)))
        return
    top = np.amax(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    with np.errstate(all="ignore"):
        result = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    if not keepdim:
        result = result.reshape(out.shape)
    _store(out, result)


# -- norms -----------------------------------------------------------------------------

def _vector_norm(x: np.ndarray, p: Any, axis: Any, keepdim: bool) -> np.ndarray:
    a = np.abs(x)
    if p == np.inf:
        return np.amax(a, axis=axis, keepdims=keepdim) if a.size else np.zeros(())
    if p == -np.inf:
        return np.amin(a, axis=axis, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return np.sum(a, axis=axis, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    with np.errstate(divide="ignore"):
        return np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


def norm(input, p, dim, keepdim, dtype, out):
    x = _wide(input)
    if dtype is not None:
        x = x.astype(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else dtype)
    axis = _axis(input, dim)
    if p == "nuc":
        dims = tuple(range(input.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
        _store(out, np.linalg.norm(x, "nuc", axis=dims, keepdims=keepdim))
        return
    _store(out, _vector_norm(x, 2 if p in ("fro", None) else p, axis, keepdim))


def dist(input, other, p, out):
    _store(out, _vector_norm(_wide(input) - _wide(other), p, None, False))


def count_nonzero(input, dim, out):
    _store(out, np.count_nonzero(input, axis=_axis(input, dim)))


# -- unique, bincount, histc -----------------------------------------------------------

def _dense_span(n: int) -> int:
    """The widest span max - min of n integers that unique counts rather than sorts: counting costs a
    pass over the span's slots (8 bytes each) more than the elements', the radix sort about 3 passes
    over 12-byte (key, position) pairs, so a span up to twice the count stays well ahead. The 1024
    slots more keep tiny inputs from walking a wide span (uint8 and int8 always fit)."""
    return 2 * n + 1024


def _unique_flat(input: np.ndarray, return_inverse: bool, return_counts: bool) -> tuple:
    flat = np.ascontiguousarray(input.reshape(-1))
    n = flat.size
    small_ints = flat.dtype.kind == "i" or (flat.dtype.kind == "u" and flat.dtype.itemsize < 8)
    if n and _unique_dense is not None and small_ints:
        # Integers over a dense range (labels, class ids: 1M int64 in [0, 1e5)) are counted, not sorted.
        inverse = np.empty(n, np.int64) if return_inverse else None
        dense = _unique_dense(flat, inverse, _dense_span(n))
        if dense is not None:
            values, counts = dense
            return values, None if inverse is None else inverse.reshape(input.shape), counts
    if n == 0 or (input.dtype in _NATIVE_SORT and _sort_lastdim is not None and n < 2**32):
        # The C++ stable sort (a radix sort on long rows: 1M int64 in [0, 1e5) 7 ms against numpy's
        # 58) gives the values in order and where each came from, which is all the inverse needs.
        ordered, order = np.empty(n, flat.dtype), np.empty(n, np.int64)
        if n:
            _sort_lastdim(flat.reshape(1, n), ordered.reshape(1, n), order.reshape(1, n), False, n)
    elif not return_inverse:
        ordered, order = np.sort(flat), None
    else:
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
        return values, inverse.reshape(input.shape).astype(np.int64), counts.astype(np.int64)
    # a run of equal values starts where the sorted value changes (NaN never equals: each its own)
    starts = np.empty(n, bool)
    if n:
        starts[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    inverse = None
    if return_inverse:
        inverse = np.empty(n, np.int64)
        inverse[order] = np.cumsum(starts) - 1
        inverse = inverse.reshape(input.shape)
    counts = np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64) if return_counts else None
    return ordered[starts], inverse, counts


def _unique_slices(input: np.ndarray, dim: int) -> tuple:
    moved = np.moveaxis(input, dim, 0)
    n = moved.shape[0]
    if n == 0:  # before the reshape: (0, -1) has no size to infer
        return input.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    flat = moved.reshape(n, -1)
    # Lexicographic order of the slices: lexsort keys go last-significant first.
    order = np.lexsort(flat.T[::-1]) if flat.shape[1] else np.arange(n)
    ordered = flat[order]
    starts = np.ones(n, bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    group = np.cumsum(starts) - 1
    inverse = np.empty(n, np.int64)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64)
    values = np.moveaxis(moved[order][starts], 0, dim)
    return values, inverse, counts


def _pick(values, inverse, counts, return_inverse, return_counts):
    values = np.ascontiguousarray(values)
    if not return_inverse and not return_counts:
        return values
    picked = [values]
    if return_inverse:
        picked.append(inverse)
    if return_counts:
        picked.append(counts)
    return tuple(picked)


def unique(input, sorted, return_inverse, return_counts, dim):
    if dim is None:
        parts = _unique_flat(input, return_inverse, return_counts)
    else:
        parts = _unique_slices(input.reshape(1) if input.ndim == 0 else input, dim if input.ndim else 0)
    return _pick(*parts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse, return_counts, dim):
    if dim is None or input.ndim == 0:
        source = input.reshape(-1)
        moved = source
        flat = source.reshape(-1, 1)
        shape_back = input.shape
        axis = 0
    else:
        axis = dim % input.ndim
        moved = np.moveaxis(input, axis, 0)
        # (n, rest) spelled out: reshape cannot infer `rest` when n is 0
        flat = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.int64)))
        shape_back = None
    n = flat.shape[0]
    starts = np.ones(n, bool)
    if n > 1:
        starts[1:] = np.any(flat[1:] != flat[:-1], axis=1) if flat.shape[1] else False
    values = moved[starts]
    if dim is not None and input.ndim:
        values = np.moveaxis(values, 0, axis)
    inverse = (np.cumsum(starts) - 1).astype(np.int64)
    if shape_back is not None:
        inverse = inverse.reshape(shape_back)
    counts = np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64)
    return _pick(values, inverse, counts, return_inverse, return_counts)


def bincount(input, weights, minlength):
    # The values are checked before numpy or C++ sees them: numpy's bincount sizes its result from the
    # largest value and wraps around at 2**63 - 1 (corrupting its heap). C++ finds the range and counts
    # (each value checked again as it is counted, since another thread may change it in between).
    values = input if input.dtype in _COUNTABLE and input.flags.c_contiguous else np.array(input, dtype=np.int64)
    nbins = minlength
    if values.size:
        lo, hi = _range(values)
        if lo < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        nbins = max(hi + 1, minlength)
    nbytes = checked_nbytes((nbins,), 8)
    try:
        counts = np.zeros(nbins, dtype=np.int64 if weights is None else np.float64)
    except MemoryError:
        raise allocation_error(nbytes) from None
    w = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if _bincount_into is not None:
        if not _bincount_into(counts, values, w):
            raise RuntimeError("bincount: the input changed while it was counted")
    else:
        counts += np.bincount(values, weights=w, minlength=nbins).astype(counts.dtype, copy=False)
    if weights is None or weights.dtype.name == "float64":
        return counts
    return counts.astype(weights.dtype if weights.dtype.name == "float32" else np.float64, copy=False)


_COUNTABLE = (np.dtype(np.int64), np.dtype(np.int32))
try:
    from .._C import bincount_into as _bincount_into, bincount_range as _bincount_range
except (ImportError, AttributeError):  # a source checkout without the extension built
    _bincount_into = _bincount_range = None


def _range(values: np.ndarray) -> tuple[int, int]:
    if _bincount_range is not None:
        return _bincount_range(values)
    return int(values.min()), int(values.max())


def histc(input, bins, min, max, out):
    data = input.reshape(-1).astype(np.float64)
    low, high = float(min), float(max)
    if low == high and data.size:
        finite = data[~np.isnan(data)]
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"flambeau.histc(): range of [{low}, {high}] is not finite")
    counts, _ = np.histogram(data[~np.isnan(data)], bins=bins, range=(low, high))
    _store(out, counts)


# inf - inf in a sum, inf * 0 in a norm...: NaN without numpy's warnings, as in PyTorch. (numpy's
# "Mean of empty slice" warnings are not floating-point errors: `_quiet` above handles those.)
KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    "nansum": nansum, "nanmean": nanmean, "var": var, "std": std, "var_mean": var_mean, "std_mean": std_mean,
    "aminmax": aminmax, "median": median, "nanmedian": nanmedian, "median_dim": median_dim,
    "nanmedian_dim": nanmedian_dim, "mode": mode,
    "quantile": _quantile(np.quantile, "quantile"), "nanquantile": _quantile(np.nanquantile, "nanquantile"),
    "logsumexp": logsumexp, "norm": norm, "dist": dist, "count_nonzero": count_nonzero,
    "unique": unique, "unique_consecutive": unique_consecutive, "bincount": bincount, "histc": histc,
})

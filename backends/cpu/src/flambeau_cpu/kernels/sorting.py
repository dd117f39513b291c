"""Kernels for comparisons and ordering: equal, allclose, isclose, isposinf/isneginf, isreal,
fmax/fmin, sort/argsort/msort, topk, kthvalue, searchsorted, bucketize.

Orders are stable everywhere (ties keep their input order; descending orders list equal
elements first-come too), and NaN ranks above every number, as in PyTorch.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None

#: dtypes the C++ sort and topk take (dtype objects: comparing them is cheaper than their names)
_NATIVE_SORT = frozenset(np.dtype(n) for n in ("float32", "float64", "int32", "int64"))
_sort_lastdim = getattr(_C, "sort_lastdim", None)
_topk_lastdim = getattr(_C, "topk_lastdim", None)


def _float(x: np.ndarray) -> bool:
    return x.dtype.kind in "fc" or x.dtype.name == "bfloat16"


def equal(input, other, out):
    out[...] = input.shape == other.shape and bool(np.array_equal(input, other))


def _isclose(input, other, rtol, atol, equal_nan):
    if not _float(input):
        a, b = input.astype(np.float64), other.astype(np.float64)
    else:
        a, b = input, other
    if a.dtype.name == "bfloat16":
        a, b = a.astype(np.float32), b.astype(np.float32)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(input, other, rtol, atol, equal_nan, out):
    np.copyto(out, _isclose(input, other, rtol, atol, equal_nan))


def allclose(input, other, rtol, atol, equal_nan, out):
    out[...] = bool(np.all(_isclose(input, other, rtol, atol, equal_nan)))


def isposinf(input, out):
    if _float(input):
        with np.errstate(invalid="ignore"):  # bfloat16 NaN compared
            np.logical_and(np.isinf(input), input > 0, out=out)
    else:
        out.fill(False)


def isneginf(input, out):
    if _float(input):
        with np.errstate(invalid="ignore"):
            np.logical_and(np.isinf(input), input < 0, out=out)
    else:
        out.fill(False)


def isreal(input, out):
    if input.dtype.kind == "c":
        np.equal(input.imag, 0, out=out)
    else:
        out.fill(True)


def _nan_aware(ufunc: np.ufunc) -> Callable[..., Any]:
    def kernel(input, other, out):
        with np.errstate(invalid="ignore"):  # NaN operands are the point of these ops
            ufunc(input, other, out=out, casting="unsafe")
    return kernel


# -- sorting ---------------------------------------------------------------------------

def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``axis``; NaN last ascending, first descending."""
    if x.dtype.name == "bfloat16":  # ml_dtypes sorts NaN out of place; float32 holds every value exactly
        x = x.astype(np.float32)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed input ascending and reversing that gives a descending order in which
    # equal elements keep their input order (and NaN, last ascending, comes first).
    n = x.shape[axis]
    reversed_order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(reversed_order, axis)


def _run_lastdim(fn: Any, input: np.ndarray, dim: int, width: int, values: np.ndarray, indices: np.ndarray,
                 *args: Any) -> bool:
    """Runs a C++ row kernel (``sort_lastdim``/``topk_lastdim``) along ``dim``.

    Off the last dim, or into outputs it cannot write directly, it works on a contiguous copy with
    ``dim`` moved last and copies the result back: O(n) extra, against an O(n log n) numpy sort.
    Returns False (numpy then runs) where the C++ kernel does not apply.
    """
    if fn is None or input.dtype not in _NATIVE_SORT or input.size == 0 or width == 0:
        return False
    last = dim == -1 or dim == input.ndim - 1
    src = np.moveaxis(input, dim, -1) if not last else input
    src = src if src.flags.c_contiguous else np.ascontiguousarray(src)
    # (outputs overlapping the input are refused by the C++ checks: numpy then runs)
    direct = last and values.dtype == input.dtype and values.flags.c_contiguous and indices.flags.c_contiguous
    if direct:
        v, i = values, indices
    else:
        shape = src.shape[:-1] + (width,)
        v, i = np.empty(shape, src.dtype), np.empty(shape, np.int64)
    try:  # the C++ side checks shapes, dtypes, bounds and overlap again before writing anything
        fn(src, v, i, *args, src.shape[-1])
    except (ValueError, TypeError):
        return False
    if not direct:
        np.copyto(values, np.moveaxis(v, -1, dim), casting="unsafe")
        np.copyto(indices, np.moveaxis(i, -1, dim))
    return True


def sort(input, dim, descending, stable, out):
    values, indices = out
    if input.ndim == 0:
        np.copyto(values, input)
        indices.fill(0)
        return
    if _run_lastdim(_sort_lastdim, input, dim, input.shape[dim], values, indices, bool(descending)):
        return
    order = _order(input, dim, descending)
    np.copyto(values, np.take_along_axis(input, order, axis=dim))
    np.copyto(indices, order)


def argsort(input, dim, descending, stable, out):
    if input.ndim == 0:
        out.fill(0)
        return
    scratch = np.empty(out.shape, input.dtype)
    if _run_lastdim(_sort_lastdim, input, dim, input.shape[dim], scratch, out, bool(descending)):
        return
    np.copyto(out, _order(input, dim, descending))


def msort(input, out):
    if input.ndim == 0:
        np.copyto(out, input)
        return
    if _run_lastdim(_sort_lastdim, input, 0, input.shape[0], out, np.empty(out.shape, np.int64), False):
        return
    np.copyto(out, np.take_along_axis(input, _order(input, 0, False), axis=0))


def topk(input, k, dim, largest, sorted, out):
    values, indices = out
    if input.ndim == 0:
        np.copyto(values, input.reshape(values.shape))
        indices.fill(0)
        return
    if _run_lastdim(_topk_lastdim, input, dim, k, values, indices, int(k), bool(largest)):
        return
    order = np.take(_order(input, dim, largest), np.arange(k), axis=dim)
    np.copyto(values, np.take_along_axis(input, order, axis=dim))
    np.copyto(indices, order)


def kthvalue(input, k, dim, keepdim, out):
    values, indices = out
    if input.ndim == 0:
        np.copyto(values, input)
        indices.fill(0)
        return
    # The k smallest in stable order (C++ heap or sort); the k-th of them is the answer.
    shape = list(input.shape)
    shape[dim] = k
    smallest, where = np.empty(shape, input.dtype), np.empty(shape, np.int64)
    if _run_lastdim(_topk_lastdim, input, dim, k, smallest, where, int(k), False):
        picked = np.take(smallest, [k - 1], axis=dim)
        index = np.take(where, [k - 1], axis=dim)
    else:
        index = np.take(_order(input, dim, False), [k - 1], axis=dim)
        picked = np.take_along_axis(input, index, axis=dim)
    if not keepdim:
        picked, index = picked.squeeze(dim), index.squeeze(dim)
    np.copyto(values, picked)
    np.copyto(indices, index)


# -- searching -------------------------------------------------------------------------

def _search(sequence: np.ndarray, values: Any, side: str, sorter: Any) -> np.ndarray:
    if sequence.ndim == 1:
        return np.searchsorted(sequence, values, side=side, sorter=sorter)
    rows = sequence.reshape(-1, sequence.shape[-1])
    wanted = np.asarray(values).reshape(rows.shape[0], -1)
    order = None if sorter is None else sorter.reshape(rows.shape)
    result = np.empty(wanted.shape, np.int64)
    for r in range(rows.shape[0]):
        result[r] = np.searchsorted(rows[r], wanted[r], side=side, sorter=None if order is None else order[r])
    return result.reshape(np.shape(values))


def searchsorted(sorted_sequence, input, out_int32, right, side, sorter, out):
    if sorter is not None and sorter.size and (sorter.min() < 0 or sorter.max() >= sorted_sequence.shape[-1]):
        raise RuntimeError("flambeau.searchsorted(): sorter index out of range")
    which = "right" if right or side == "right" else "left"
    np.copyto(out, np.asarray(_search(sorted_sequence, input, which, sorter)).reshape(out.shape), casting="unsafe")


def bucketize(input, boundaries, out_int32, right, out):
    which = "right" if right else "left"
    np.copyto(out, np.asarray(np.searchsorted(boundaries, input, side=which)).reshape(out.shape), casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {
    "equal": equal, "allclose": allclose, "isclose": isclose, "isposinf": isposinf, "isneginf": isneginf,
    "isreal": isreal, "fmax": _nan_aware(np.fmax), "fmin": _nan_aware(np.fmin),
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
    "searchsorted": searchsorted, "bucketize": bucketize,
}

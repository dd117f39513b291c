"""``unique`` and ``unique_consecutive`` on the host: both need a sort (or a run detection whose
result size depends on the data), which the core tier has no reasonable formulation of.

The input comes to the host once, numpy finds the runs of equal elements (or slices along ``dim``)
and the results go back. ``unique`` always returns its values sorted: PyTorch leaves the order
unspecified for ``sorted=False``, and sorted is one valid order (the CPU kernel's too). NaN never
equals NaN, so each NaN is its own run, as in PyTorch's sort-based unique.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from . import decomposition
from .host import _from_host, _to_host


def _comparable(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype numpy sorts and compares natively (half types widened: order and equality kept)."""
    return x.astype(np.float32) if x.dtype.name in ("bfloat16", "float16") else x


def _run_starts(rows: np.ndarray) -> np.ndarray:
    """For rows (n, k) in order, True where a row differs from the one before (always at row 0)."""
    n = rows.shape[0]
    starts = np.ones(n, bool)
    if n > 1 and rows.shape[1]:
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    elif n > 1:
        starts[1:] = False  # empty slices all equal each other
    return starts


def _counts(starts: np.ndarray) -> np.ndarray:
    return np.diff(np.append(np.flatnonzero(starts), starts.size)).astype(np.int64)


def _slices(x: np.ndarray, dim: Any) -> tuple[np.ndarray, int]:
    """``x`` as rows: one element a row for ``dim=None`` (or 0-d), else one slice along ``dim`` a row."""
    if dim is None or x.ndim == 0:
        return x.reshape(-1, 1), 0
    axis = dim % x.ndim
    moved = np.moveaxis(x, axis, 0)
    width = int(np.prod(moved.shape[1:], dtype=np.int64))  # explicit: -1 is ambiguous with 0 rows
    return moved.reshape(moved.shape[0], width), axis


def _results(x: Tensor, values: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
             return_inverse: bool, return_counts: bool) -> Any:
    from ... import _dtypes

    out = [_from_host(values, x._dtype, x._device)]
    if return_inverse:
        out.append(_from_host(inverse, _dtypes.int64, x._device))
    if return_counts:
        out.append(_from_host(counts, _dtypes.int64, x._device))
    return tuple(out) if len(out) > 1 else out[0]


def _take_rows(host: np.ndarray, dim: Any, axis: int, rows: np.ndarray) -> np.ndarray:
    """The elements (``dim=None``) or slices along ``axis`` at positions ``rows``, in the input's layout."""
    if dim is None or host.ndim == 0:
        return host.reshape(-1)[rows]
    return np.moveaxis(np.moveaxis(host, axis, 0)[rows], 0, axis)


@decomposition("unique", "to_dtype", host=True)
def _unique(x: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
            dim: Any = None) -> Any:
    host = _to_host(x)
    rows, axis = _slices(_comparable(host), dim)
    n = rows.shape[0]
    # A stable order of the rows: lexsort's keys go least significant first, so the columns reversed.
    if rows.shape[1] == 1:
        order = np.argsort(rows[:, 0], kind="stable")
    elif rows.shape[1] and n:
        order = np.lexsort(rows.T[::-1])
    else:
        order = np.arange(n)
    starts = _run_starts(rows[order])
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(starts) - 1
    if dim is None:
        inverse = inverse.reshape(host.shape)
    values = _take_rows(host, dim, axis, order[starts])
    return _results(x, values, inverse, _counts(starts), return_inverse, return_counts)


@decomposition("unique_consecutive", "to_dtype", host=True)
def _unique_consecutive(x: Tensor, return_inverse: bool = False, return_counts: bool = False,
                        dim: Any = None) -> Any:
    host = _to_host(x)
    rows, axis = _slices(_comparable(host), dim)
    starts = _run_starts(rows)
    inverse = np.cumsum(starts, dtype=np.int64) - 1
    if dim is None:
        inverse = inverse.reshape(host.shape)
    values = _take_rows(host, dim, axis, np.flatnonzero(starts))
    return _results(x, values, inverse, _counts(starts), return_inverse, return_counts)

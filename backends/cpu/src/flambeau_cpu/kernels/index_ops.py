"""The CPU kernels of the index ops: C++ (``flambeau_cpu._C.dim_index``) for gather, scatter,
scatter_add, index_select, index_add and index_copy, numpy (:mod:`.index_ops_np`) for the rest and
for whatever the C++ kernel declines (other dtypes, unaligned or overlapping arrays).

The C++ kernel is used at every size: one pybind11 call costs less than numpy's fancy indexing
even for a handful of elements. It runs with the GIL released, while other Python threads may
change the index tensor, so an index is never checked first and trusted later:

* into a fresh output (the functional forms), each index is loaded once, checked and used in the
  same pass; a bad one raises and the half-written output is dropped;
* into a tensor the user holds (the in-place forms, and ``out=``: the dispatcher then calls each
  kernel's ``into_existing``), the kernel works on a private copy of the index, all of which is
  checked before anything is written, so that bad input leaves that tensor as it was.

The wrappers turn the kernel's IndexError into the error PyTorch gives for each op.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import index_ops_np as _np_ops

try:
    from .._C import dim_index as _dim_index
except (ImportError, AttributeError):  # a source checkout without the extension built
    _dim_index = None

_GATHER, _ASSIGN, _ADD = 0, 1, 2
_ndarray = np.ndarray
_may_share = np.may_share_memory


def _bad_value(exc: IndexError) -> int:
    return int(str(exc).split()[1])  # "index V is out of bounds for dimension D with size N"


def _private(index: np.ndarray) -> np.ndarray:
    """A copy of ``index`` that no other thread can reach (checked once, then trusted)."""
    return np.array(index, copy=True, order="C")


def _write(mode: int, input: Any, out: np.ndarray, src: np.ndarray, index: np.ndarray, dim: int, vector: bool,
           alpha: Any = 1, existing: bool = False) -> bool:
    """Scatter-like C++ call: copies ``input`` into ``out`` (functional forms), then writes at ``index``.

    ``existing``: ``out`` is a tensor the user holds (in-place or ``out=``).
    """
    inplace = out is input
    precheck = inplace or existing
    if precheck:
        index = _private(index)
    if out.ndim == 0:
        out = out.reshape(1)
        input = out if inplace else input.reshape(1)
    if src.ndim == 0:
        src = src.reshape(1)
    if index.ndim == 0:
        index = index.reshape(1)
    d, pre = dim % out.ndim, None if inplace else input
    if _dim_index(mode, out, src, index, d, vector, alpha, pre, precheck):
        return True
    if _may_share(src, out):  # declined because src overlaps what is written: read a copy
        return _dim_index(mode, out, src.copy(), index, d, vector, alpha, pre, precheck)
    return False


def _gather(input, dim, index, sparse_grad, out, existing):
    if _dim_index is not None:
        if existing:
            index = _private(index)
        nd = input.ndim
        try:
            if nd:
                done = _dim_index(_GATHER, out, input, index, dim % nd, False, 1.0, None, existing)
            else:
                done = _dim_index(_GATHER, out.reshape(1), input.reshape(1), index.reshape(1), 0, False, 1.0, None,
                                  existing)
        except IndexError as exc:
            raise RuntimeError(str(exc)) from None
        if done:
            return
    _np_ops.gather(input, dim, index, sparse_grad, out)


def _scatter(input, dim, index, src, value, reduce, out, existing):
    if _dim_index is not None and type(src) is _ndarray and reduce in (None, "add"):
        try:
            if _write(_ASSIGN if reduce is None else _ADD, input, out, src, index, dim, False, existing=existing):
                return
        except IndexError as exc:
            raise RuntimeError(str(exc)) from None
    _np_ops.scatter(input, dim, index, src, value, reduce, out)


def _scatter_add(input, dim, index, src, out, existing):
    _scatter(input, dim, index, src, None, "add", out, existing)


def _index_select(input, dim, index, out, existing):
    if _dim_index is not None:
        index = _private(index.reshape(-1)) if existing else index.reshape(-1)
        nd = input.ndim
        try:
            if nd:
                done = _dim_index(_GATHER, out, input, index, dim % nd, True, 1.0, None, existing)
            else:
                done = _dim_index(_GATHER, out.reshape(1), input.reshape(1), index, 0, True, 1.0, None, existing)
        except IndexError:
            raise IndexError("index out of range in self") from None
        if done:
            return
    _np_ops.index_select(input, dim, index, out)


def _index_add(input, dim, index, source, alpha, out, existing):
    if _dim_index is not None and type(alpha) in (int, float) and out.dtype.kind in "fi":
        a = int(alpha) if out.dtype.kind == "i" else alpha  # PyTorch truncates alpha for integral tensors
        try:
            if _write(_ADD, input, out, source, index.reshape(-1), dim, True, a, existing):
                return
        except IndexError as exc:
            if _bad_value(exc) < 0:
                raise IndexError("index out of range in self") from None
            raise RuntimeError(str(exc)) from None
    _np_ops.index_add(input, dim, index, source, alpha, out)


def _index_copy(input, dim, index, source, out, existing):
    if _dim_index is not None and index.dtype == np.int64:
        try:
            if _write(_ASSIGN, input, out, source, index.reshape(-1), dim, True, existing=existing):
                return
        except IndexError as exc:
            raise IndexError(f"index_copy_(): {exc}") from None
    _np_ops.index_copy(input, dim, index, source, out)


# The kernels, with the ops' own parameters; the dispatcher calls `into_existing` for out=.

def gather(input, dim, index, sparse_grad, out):
    _gather(input, dim, index, sparse_grad, out, False)


def scatter(input, dim, index, src, value, reduce, out):
    _scatter(input, dim, index, src, value, reduce, out, False)


def scatter_add(input, dim, index, src, out):
    _scatter_add(input, dim, index, src, out, False)


def index_select(input, dim, index, out):
    _index_select(input, dim, index, out, False)


def index_add(input, dim, index, source, alpha, out):
    _index_add(input, dim, index, source, alpha, out, False)


def index_copy(input, dim, index, source, out):
    _index_copy(input, dim, index, source, out, False)


gather.into_existing = lambda input, dim, index, sparse_grad, out: _gather(  # type: ignore[attr-defined]
    input, dim, index, sparse_grad, out, True)
scatter.into_existing = lambda input, dim, index, src, value, reduce, out: _scatter(  # type: ignore[attr-defined]
    input, dim, index, src, value, reduce, out, True)
scatter_add.into_existing = lambda input, dim, index, src, out: _scatter_add(  # type: ignore[attr-defined]
    input, dim, index, src, out, True)
index_select.into_existing = lambda input, dim, index, out: _index_select(  # type: ignore[attr-defined]
    input, dim, index, out, True)
index_add.into_existing = lambda input, dim, index, source, alpha, out: _index_add(  # type: ignore[attr-defined]
    input, dim, index, source, alpha, out, True)
index_copy.into_existing = lambda input, dim, index, source, out: _index_copy(  # type: ignore[attr-defined]
    input, dim, index, source, out, True)

KERNELS: dict[str, Callable[..., Any]] = dict(_np_ops.KERNELS)
KERNELS.update({"gather": gather, "scatter": scatter, "scatter_add": scatter_add, "index_select": index_select,
                "index_add": index_add, "index_copy": index_copy})

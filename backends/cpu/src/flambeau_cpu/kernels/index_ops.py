"""The CPU kernels of the index ops: C++ (``flambeau_cpu._C.dim_index``) for gather, scatter,
scatter_add, index_select, index_add and index_copy, numpy (:mod:`.index_ops_np`) for the rest and
for whatever the C++ kernel declines (other dtypes, unaligned or overlapping arrays).

The C++ kernel is used at every size: one pybind11 call costs less than numpy's fancy indexing
even for a handful of elements. It checks every index before writing and raises IndexError naming
the first bad one; the wrappers here turn that into the error PyTorch gives for each op.
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


def _write(mode: int, input: Any, out: np.ndarray, src: np.ndarray, index: np.ndarray, dim: int, vector: bool,
           alpha: Any = 1) -> bool:
    """Scatter-like C++ call: copies ``input`` into ``out`` (functional forms) after the index check."""
    inplace = out is input
    if out.ndim == 0:
        out = out.reshape(1)
        input = out if inplace else input.reshape(1)
    if src.ndim == 0:
        src = src.reshape(1)
    if index.ndim == 0:
        index = index.reshape(1)
    d, pre = dim % out.ndim, None if inplace else input
    if _dim_index(mode, out, src, index, d, vector, alpha, pre):
        return True
    if _may_share(src, out):  # declined because src overlaps what is written: read a copy
        return _dim_index(mode, out, src.copy(), index, d, vector, alpha, pre)
    return False


def gather(input, dim, index, sparse_grad, out):
    if _dim_index is not None:
        nd = input.ndim
        try:
            if nd:
                done = _dim_index(_GATHER, out, input, index, dim % nd, False, 1.0, None)
            else:
                done = _dim_index(_GATHER, out.reshape(1), input.reshape(1), index.reshape(1), 0, False, 1.0, None)
        except IndexError as exc:
            raise RuntimeError(str(exc)) from None
        if done:
            return
    _np_ops.gather(input, dim, index, sparse_grad, out)


def scatter(input, dim, index, src, value, reduce, out):
    if _dim_index is not None and type(src) is _ndarray and reduce in (None, "add"):
        try:
            if _write(_ASSIGN if reduce is None else _ADD, input, out, src, index, dim, False):
                return
        except IndexError as exc:
            raise RuntimeError(str(exc)) from None
    _np_ops.scatter(input, dim, index, src, value, reduce, out)


def scatter_add(input, dim, index, src, out):
    scatter(input, dim, index, src, None, "add", out)


def index_select(input, dim, index, out):
    if _dim_index is not None:
        nd = input.ndim
        try:
            if nd:
                done = _dim_index(_GATHER, out, input, index.reshape(-1), dim % nd, True, 1.0, None)
            else:
                done = _dim_index(_GATHER, out.reshape(1), input.reshape(1), index.reshape(-1), 0, True, 1.0, None)
        except IndexError:
            raise IndexError("index out of range in self") from None
        if done:
            return
    _np_ops.index_select(input, dim, index, out)


def index_add(input, dim, index, source, alpha, out):
    if _dim_index is not None and type(alpha) in (int, float) and out.dtype.kind in "fi":
        a = int(alpha) if out.dtype.kind == "i" else alpha  # PyTorch truncates alpha for integral tensors
        try:
            if _write(_ADD, input, out, source, index.reshape(-1), dim, True, a):
                return
        except IndexError as exc:
            if _bad_value(exc) < 0:
                raise IndexError("index out of range in self") from None
            raise RuntimeError(str(exc)) from None
    _np_ops.index_add(input, dim, index, source, alpha, out)


def index_copy(input, dim, index, source, out):
    if _dim_index is not None and index.dtype == np.int64:
        try:
            if _write(_ASSIGN, input, out, source, index.reshape(-1), dim, True):
                return
        except IndexError as exc:
            raise IndexError(f"index_copy_(): {exc}") from None
    _np_ops.index_copy(input, dim, index, source, out)


KERNELS: dict[str, Callable[..., Any]] = dict(_np_ops.KERNELS)
KERNELS.update({"gather": gather, "scatter": scatter, "scatter_add": scatter_add, "index_select": index_select,
                "index_add": index_add, "index_copy": index_copy})

"""Declarations of comparisons and ordering: equal, allclose, isclose, isposinf/isneginf, isreal,
fmax/fmin, sort/argsort/msort, topk, kthvalue, searchsorted, bucketize."""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ._docs_statistics import DOCS
from ..ops.meta import binary_result_type, broadcast, fmt_shape, reduced_shape, type_name, wrap_dim


def _equal_meta(input: Tensor, other: Tensor) -> tuple:
    return (), _dtypes.bool


def _check_tolerances(rtol: Any, atol: Any) -> None:
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")


def _isclose_meta(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                  equal_nan: bool = False) -> tuple:
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{type_name(input._dtype)} did not match {type_name(other._dtype)}")
    _check_tolerances(rtol, atol)
    return broadcast(input, other), _dtypes.bool


def _allclose_meta(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                   equal_nan: bool = False) -> tuple:
    _isclose_meta(input, other, rtol, atol, equal_nan)
    return (), _dtypes.bool


def _isinf_sign_meta(name: str):
    def meta(input: Tensor) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")
        return input._data.shape, _dtypes.bool
    return meta


def _isreal_meta(input: Tensor) -> tuple:
    return input._data.shape, _dtypes.bool


def _fminmax_meta(name: str):
    def meta(input: Tensor, other: Tensor) -> tuple:
        dt = binary_result_type(input, other)
        if dt.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return broadcast(input, other), dt
    return meta


def _sortable(name: str, input: Tensor) -> None:
    if input._dtype._category == _dtypes._COMPLEX:
        raise RuntimeError(f'"{name}" not implemented for \'{type_name(input._dtype)}\'')


def _fast_dim(dim: Any, ndim: int) -> int:
    """``wrap_dim`` with the common case (an in-range int) first: these metas run on every call."""
    if type(dim) is int and -ndim <= dim < ndim:
        return dim % ndim
    return wrap_dim(dim, ndim)


def _sort_meta(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> list:
    _sortable("sort", input)
    shape = input._data.shape
    _fast_dim(dim, len(shape))
    return [(shape, input._dtype), (shape, _dtypes.int64)]


def _argsort_meta(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> tuple:
    return _sort_meta(input, dim, descending, stable)[1]


def _msort_meta(input: Tensor) -> tuple:
    _sortable("sort", input)
    return input._data.shape, input._dtype


def _dim_size(input: Tensor, dim: int) -> int:
    d = wrap_dim(dim, input._data.ndim)
    return input._data.shape[d] if input._data.ndim else 1


def _topk_meta(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> list:
    _sortable("topk_cpu", input)
    shape = input._data.shape
    if not shape:
        wrap_dim(dim, 0)
        size, out_shape = 1, ()
    else:
        d = _fast_dim(dim, len(shape))
        size = shape[d]
        out_shape = shape[:d] + (k,) + shape[d + 1:]
    if type(k) is not int:
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    return [(out_shape, input._dtype), (out_shape, _dtypes.int64)]


def _kthvalue_meta(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> list:
    _sortable("kthvalue_cpu", input)
    d = wrap_dim(dim, input._data.ndim)
    size = _dim_size(input, dim)
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    shape = reduced_shape(input._data.shape, (d,) if input._data.ndim else None, keepdim)
    return [(shape, input._dtype), (shape, _dtypes.int64)]


def _search_side(right: bool, side: Any) -> None:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"flambeau.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError("flambeau.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")


def _searchsorted_meta(sorted_sequence: Tensor, input: Any, out_int32: bool = False, right: bool = False,
                       side: Any = None, sorter: Any = None) -> tuple:
    _search_side(right, side)
    seq = sorted_sequence._data.shape
    if sorted_sequence._dtype.is_complex or (isinstance(input, Tensor) and input._dtype.is_complex):
        raise RuntimeError("flambeau.searchsorted(): does not support complex inputs")
    if not seq:
        raise RuntimeError("flambeau.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    values = input._data.shape if isinstance(input, Tensor) else ()
    if len(seq) != 1 and (not isinstance(input, Tensor) or seq[:-1] != values[:-1]):
        raise RuntimeError("flambeau.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {fmt_shape(seq)} and input value tensor {fmt_shape(values)}")
    if sorter is not None:
        if sorter._data.shape != seq:
            raise RuntimeError("flambeau.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {fmt_shape(seq)}and got sorter tensor {fmt_shape(sorter._data.shape)}")
        if sorter._dtype is not _dtypes.int64:
            raise RuntimeError("flambeau.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               + type_name(sorter._dtype))
    return values, _dtypes.int32 if out_int32 else _dtypes.int64


def _bucketize_meta(input: Any, boundaries: Tensor, out_int32: bool = False, right: bool = False) -> tuple:
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return _searchsorted_meta(boundaries, input, out_int32, right, None, None)


_SORT_SIG = "(input: Tensor, dim=-1, descending=False, *, stable=False)"


def declarations() -> list[OpDecl]:
    decls = [
        OpDecl("equal", "(input: Tensor, other: Tensor)", _equal_meta, method=False, export=False,
               differentiable=False, doc="Whether both have the same size and elements (as a 0-d bool tensor)."),
        OpDecl("allclose", "(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False)",
               _allclose_meta, method=False, export=False, differentiable=False,
               doc="Whether ``isclose`` holds everywhere (as a 0-d bool tensor)."),
        OpDecl("isclose", "(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False)",
               _isclose_meta, differentiable=False,
               doc="``|input - other| <= atol + rtol * |other|``, elementwise; NaN equals NaN if ``equal_nan``."),
        OpDecl("isposinf", "(input: Tensor)", _isinf_sign_meta("isposinf"), differentiable=False,
               doc="Whether each element is positive infinity."),
        OpDecl("isneginf", "(input: Tensor)", _isinf_sign_meta("isneginf"), differentiable=False,
               doc="Whether each element is negative infinity."),
        OpDecl("isreal", "(input: Tensor)", _isreal_meta, differentiable=False,
               doc="Whether each element is real-valued (imaginary part zero; always for real dtypes)."),
        OpDecl("fmax", "(input: Tensor, other: Tensor)", _fminmax_meta("fmax"), zero_dim_common=True,
               doc="The elementwise maximum, ignoring NaN (NaN only where both are NaN)."),
        OpDecl("fmin", "(input: Tensor, other: Tensor)", _fminmax_meta("fmin"), zero_dim_common=True,
               doc="The elementwise minimum, ignoring NaN (NaN only where both are NaN)."),
        OpDecl("sort", _SORT_SIG, _sort_meta, output_names=("values", "indices"),
               doc="Sorts along ``dim`` (NaN last ascending, first descending); ``stable`` keeps ties in order."),
        OpDecl("argsort", _SORT_SIG, _argsort_meta, differentiable=False,
               doc="The indices that sort ``input`` along ``dim``."),
        OpDecl("msort", "(input: Tensor)", _msort_meta, doc="Sorts along the first dim, ascending."),
        OpDecl("topk", "(input: Tensor, k, dim=-1, largest=True, sorted=True)", _topk_meta,
               output_names=("values", "indices"), doc="The ``k`` largest (or smallest) elements along ``dim``."),
        OpDecl("kthvalue", "(input: Tensor, k, dim=-1, keepdim=False)", _kthvalue_meta,
               output_names=("values", "indices"), doc="The ``k``-th smallest element along ``dim`` and its index."),
        OpDecl("searchsorted",
               "(sorted_sequence: Tensor, input: TensorOrScalar, *, out_int32=False, right=False, side=None, "
               "sorter: Tensor? = None)", _searchsorted_meta, method=False, differentiable=False,
               doc="Where each of ``input`` would go in ``sorted_sequence`` (its innermost dim) to keep it sorted."),
        OpDecl("bucketize", "(input: TensorOrScalar, boundaries: Tensor, *, out_int32=False, right=False)",
               _bucketize_meta, method=False, differentiable=False,
               doc="The bucket of each element of ``input`` among the 1-d ``boundaries``."),
    ]
    for decl in decls:  # the full docstrings (Args, Example) where written
        decl.doc = DOCS.get(decl.name, decl.doc)
    return decls

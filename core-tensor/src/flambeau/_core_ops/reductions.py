"""Declarations of core-tensor's reductions: sum, mean, prod, amax/amin, max/min along a dim, argmax."""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import reduced_shape, reduction_dims, reduction_shape, type_name, wrap_dim


def _accumulate_dtype(input: Tensor, dtype: Any) -> _dtypes.dtype:
    if dtype is not None:
        return dtype
    return _dtypes.int64 if input._dtype._category <= _dtypes._INT else input._dtype


def _sum_meta(input: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    return reduction_shape(input, dim, keepdim), _accumulate_dtype(input, dtype)


def _mean_meta(input: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    out_dtype = dtype or input._dtype
    if out_dtype._category < _dtypes._FLOAT:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {type_name(out_dtype)}"
        )
    return reduction_shape(input, dim, keepdim), out_dtype


def _prod_meta(input: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    if dim is not None and not isinstance(dim, int):
        raise TypeError("prod(): argument 'dim' must be int, not " + type(dim).__name__)
    dims = None if dim is None else (wrap_dim(dim, input._data.ndim),)
    return reduced_shape(input._data.shape, dims, keepdim), _accumulate_dtype(input, dtype)


def _check_nonempty(name: str, input: Tensor, dims: tuple[int, ...] | None) -> None:
    shape = input._data.shape
    if dims is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extreme_meta(name: str):
    def meta(input: Tensor, dim: Any = None, keepdim: bool = False) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        dims = reduction_dims(input, dim)
        _check_nonempty(name, input, dims)
        return reduced_shape(input._data.shape, dims, keepdim), input._dtype
    return meta


def _extreme_dim_meta(name: str):
    def meta(input: Tensor, dim: int, keepdim: bool = False) -> list:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        d = wrap_dim(dim, input._data.ndim)
        _check_nonempty(name, input, (d,))
        shape = reduced_shape(input._data.shape, (d,) if input._data.ndim else None, keepdim)
        return [(shape, input._dtype), (shape, _dtypes.int64)]
    return meta


def _arg_meta(name: str):
    def meta(input: Tensor, dim: Any = None, keepdim: bool = False) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{type_name(input._dtype)}\'')
        dims = None if dim is None else (wrap_dim(dim, input._data.ndim),)
        if dims is not None and not input._data.ndim:
            dims = None
        _check_nonempty(name, input, dims)
        return reduced_shape(input._data.shape, dims, keepdim), _dtypes.int64
    return meta


def _logical_reduce_meta(input: Tensor, dim: Any = None, keepdim: bool = False) -> tuple:
    dims = reduction_dims(input, dim)
    return reduced_shape(input._data.shape, dims, keepdim), (
        _dtypes.uint8 if input._dtype is _dtypes.uint8 else _dtypes.bool)


def declarations() -> list[OpDecl]:
    return [
        OpDecl("sum", "(input: Tensor, dim=None, keepdim=False, *, dtype=None)", _sum_meta,
               doc="The sum of all elements, or along ``dim`` (an int or a tuple of ints)."),
        OpDecl("mean", "(input: Tensor, dim=None, keepdim=False, *, dtype=None)", _mean_meta,
               doc="The mean of all elements, or along ``dim``; floating-point and complex inputs only."),
        OpDecl("prod", "(input: Tensor, dim=None, keepdim=False, *, dtype=None)", _prod_meta,
               doc="The product of all elements, or along one ``dim``."),
        OpDecl("amax", "(input: Tensor, dim=(), keepdim=False)", _extreme_meta("amax"),
               doc="The maximum of all elements, or along ``dim`` (an int or a tuple of ints)."),
        OpDecl("amin", "(input: Tensor, dim=(), keepdim=False)", _extreme_meta("amin"),
               doc="The minimum of all elements, or along ``dim`` (an int or a tuple of ints)."),
        OpDecl("max_dim", "(input: Tensor, dim, keepdim=False)", _extreme_dim_meta("max"), method=False, export=False,
               output_names=("values", "indices"), doc="The maxima along ``dim`` and their indices."),
        OpDecl("min_dim", "(input: Tensor, dim, keepdim=False)", _extreme_dim_meta("min"), method=False, export=False,
               output_names=("values", "indices"), doc="The minima along ``dim`` and their indices."),
        OpDecl("argmax", "(input: Tensor, dim=None, keepdim=False)", _arg_meta("argmax"), differentiable=False,
               doc="The index of the maximum (of the flattened input when ``dim`` is None)."),
        OpDecl("argmin", "(input: Tensor, dim=None, keepdim=False)", _arg_meta("argmin"), differentiable=False,
               doc="The index of the minimum (of the flattened input when ``dim`` is None)."),
        OpDecl("all", "(input: Tensor, dim=None, keepdim=False)", _logical_reduce_meta, differentiable=False,
               doc="Whether all elements (along ``dim``) are non-zero."),
        OpDecl("any", "(input: Tensor, dim=None, keepdim=False)", _logical_reduce_meta, differentiable=False,
               doc="Whether any element (along ``dim``) is non-zero."),
    ]

"""Declarations of the rest of PyTorch's slicing list: hsplit/vsplit/dsplit, narrow_copy, adjoint,
and the out-of-place writes select_scatter, slice_scatter and diagonal_scatter.

All are composites of view ops, ``tensor_split``, ``clone`` and ``copy_``, so every backend runs
them and autograd differentiates them through their parts.
"""
from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..ops._decl import VIEW, OpDecl
from ..ops.meta import fmt_shape, wrap_dim
from .shape import _tensor_split, result_of


def _directional_split(name: str, dim: int, min_ndim: int):
    def composite(input: Tensor, indices_or_sections: Any) -> tuple:
        ndim = input._data.ndim
        if ndim < min_ndim:
            raise RuntimeError(f"flambeau.{name} requires a tensor with at least {min_ndim} dimension, "
                               f"but got a tensor with {ndim} dimensions!")
        d = 0 if name == "hsplit" and ndim == 1 else dim
        if isinstance(indices_or_sections, int):
            size = input._data.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"flambeau.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return _tensor_split(input, indices_or_sections, d)
    composite.__name__ = f"_{name}"
    return composite


def _narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    return input.narrow(dim, start, length).clone()


def _adjoint(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {input._data.ndim}-D tensor.")
    t = input.transpose(-2, -1)
    return t.conj() if input.is_complex() else t


def _scatter_into(input: Tensor, src: Tensor, region: Tensor) -> Tensor:
    """A copy of ``input`` whose ``region`` (a view of that copy) holds ``src``."""
    if tuple(src._data.shape) != tuple(region._data.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{fmt_shape(src._data.shape)}, slice size = {fmt_shape(region._data.shape)}")
    region.copy_(src)
    return region


def _select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    out = input.clone()
    _scatter_into(input, src, out.select(dim, index))
    return out


def _slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                   step: int = 1) -> Tensor:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    out = input.clone()
    d = wrap_dim(dim, input._data.ndim)
    index = (slice(None),) * d + (slice(start, end, step),)
    _scatter_into(input, src, out[index])
    return out


def _diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    out = input.clone()
    _scatter_into(input, src, out.diagonal(offset, dim1, dim2))
    return out


def declarations() -> list[OpDecl]:
    return [
        OpDecl("hsplit", "(input: Tensor, indices_or_sections)", None, kind=VIEW,
               composite=_directional_split("hsplit", 1, 1),
               doc="``tensor_split`` along dim 1 (dim 0 for a 1-D tensor); a section count must divide the size."),
        OpDecl("vsplit", "(input: Tensor, indices_or_sections)", None, kind=VIEW,
               composite=_directional_split("vsplit", 0, 2),
               doc="``tensor_split`` along dim 0 of a tensor of at least 2 dims."),
        OpDecl("dsplit", "(input: Tensor, indices_or_sections)", None, kind=VIEW,
               composite=_directional_split("dsplit", 2, 3),
               doc="``tensor_split`` along dim 2 of a tensor of at least 3 dims."),
        OpDecl("narrow_copy", "(input: Tensor, dim, start, length)", result_of(_narrow_copy), composite=_narrow_copy,
               doc="A copy of ``narrow(input, dim, start, length)``."),
        OpDecl("adjoint", "(input: Tensor)", None, kind=VIEW, composite=_adjoint,
               doc="A view of the conjugate transpose of the last two dims."),
        OpDecl("select_scatter", "(input: Tensor, src: Tensor, dim, index)", result_of(_select_scatter),
               composite=_select_scatter, doc="A copy of ``input`` with ``src`` written at ``select(dim, index)``."),
        OpDecl("slice_scatter", "(input: Tensor, src: Tensor, dim=0, start=None, end=None, step=1)",
               result_of(_slice_scatter), composite=_slice_scatter,
               doc="A copy of ``input`` with ``src`` written at ``start:end:step`` along ``dim``."),
        OpDecl("diagonal_scatter", "(input: Tensor, src: Tensor, offset=0, dim1=0, dim2=1)",
               result_of(_diagonal_scatter), composite=_diagonal_scatter,
               doc="A copy of ``input`` with ``src`` written on ``diagonal(offset, dim1, dim2)``."),
    ]

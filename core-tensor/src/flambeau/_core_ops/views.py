"""Declarations of view ops: results share storage (and the version counter) with their input."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from .._creation import clone
from .._layout import contiguous_strides as _contiguous_strides
from .._layout import format_name
from .._tensor import Tensor
from ..ops._decl import VIEW, OpDecl
from ..ops._registry import FUNCTIONS
from ..ops.meta import expanded_shape, fmt_shape, wrap_dim, wrap_dims
from ..ops.sizes import checked_numel


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """A requested shape with its one ``-1`` filled in, checked against ``numel``."""
    shape = tuple(operator.index(s) for s in shape)  # not int(): "2" and 2.5 are refused, as in PyTorch
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {fmt_shape(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {fmt_shape(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{fmt_shape(shape)}' is invalid for input of size {numel}")
        shape = shape[:unknown[0]] + (numel // known,) + shape[unknown[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{fmt_shape(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]) -> tuple | None:
    """Strides that present the same memory in ``new_shape``, or None when a copy is needed."""
    if math.prod(old_shape) == 0 or not old_shape:
        return _contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _row_major(input: Tensor) -> bool:
    """Whether ``input``'s native array says it is row-major contiguous (False when it cannot tell)."""
    try:
        return input._data.flags.c_contiguous
    except AttributeError:  # a backend's native array without numpy's flags
        return False


def _contiguous_target(input: Tensor, shape: Any) -> tuple[int, ...] | None:
    """``shape`` with its -1 filled in, when ``input`` is row-major contiguous and ``shape`` (a tuple
    of ints) fits it: the common view/reshape, checked in one pass. None sends the caller to the
    full checks (which also give every error)."""
    if shape.__class__ is not tuple or not _row_major(input):
        return None
    data = input._data
    known, unknown = 1, -1
    for i, s in enumerate(shape):
        if s.__class__ is not int:
            return None
        if s >= 0:
            known *= s
        elif s == -1 and unknown < 0:
            unknown = i
        else:
            return None
    numel = data.size
    if unknown < 0:
        return shape if known == numel else None
    if known == 0 or numel % known:
        return None
    return shape[:unknown] + (numel // known,) + shape[unknown + 1:]


def _view_meta(input: Tensor, size: Sequence[int]) -> None:
    if _contiguous_target(input, size) is not None:
        return
    shape = infer_size(size, input.numel())
    if view_strides(input._data.shape, input.stride(), shape) is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead."
        )


def _reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    if _row_major(input):  # always viewable: view's own checks give reshape's errors too
        return FUNCTIONS["view"](input, shape)
    target = infer_size(shape, input.numel())
    if view_strides(input._data.shape, input.stride(), target) is not None:
        return FUNCTIONS["view"](input, target)

    return FUNCTIONS["clone"](input).view(target)  # the op: a row-major copy (Tensor.clone keeps strides)


def _transpose_meta(input: Tensor, dim0: int, dim1: int) -> None:
    wrap_dim(dim0, input._data.ndim)
    wrap_dim(dim1, input._data.ndim)


def _permute_meta(input: Tensor, dims: Sequence[int]) -> None:
    if len(dims) != input._data.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {input._data.ndim} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    wrapped = [wrap_dim(d, input._data.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")


def _t_meta(input: Tensor) -> None:
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")


def _expand_meta(input: Tensor, size: Sequence[int]) -> None:
    expanded_shape(input._data.shape, size, input.type())


def _squeeze_meta(input: Tensor, dim: Any = None) -> None:
    if dim is not None:
        wrap_dims(dim, input._data.ndim)


def _unsqueeze_meta(input: Tensor, dim: int) -> None:
    wrap_dim(dim, input._data.ndim + 1)


def _narrow_meta(input: Tensor, dim: int, start: int, length: int) -> None:
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start % size if size and start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")


def _select_meta(input: Tensor, dim: int, index: int) -> None:
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {fmt_shape(input._data.shape)} at dimension {d}"
        )


def _unfold_meta(input: Tensor, dimension: int, size: int, step: int) -> None:
    d = wrap_dim(dimension, input._data.ndim)
    have = input._data.shape[d] if input._data.ndim else 1
    if size > have:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {have} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")


def _as_strided_meta(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Any = None) -> None:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {fmt_shape(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: "
                           + fmt_shape(stride))
    checked_numel(size)
    offset = input.storage_offset() if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = offset + (1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0)
    available = input._storage_numel()
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {fmt_shape(size)}, strides {fmt_shape(stride)}, storage offset {offset}, and itemsize "
            f"{input._dtype.itemsize} requiring a storage size of {needed * input._dtype.itemsize} are out of bounds "
            f"for storage of size {available * input._dtype.itemsize}"
        )


def _basic_index_meta(input: Tensor, index: tuple) -> None:
    """``index`` is normalised by ``_indexing``: ints, slices and None, one entry per used dim."""


def _unbind(input: Tensor, dim: int = 0) -> tuple:
    d = wrap_dim(dim, input._data.ndim)
    return tuple(input.select(d, i) for i in range(input._data.shape[d]))


def _contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    name = format_name(memory_format, "contiguous", default="contiguous_format")
    if name in ("contiguous_format", "preserve_format"):
        if input.is_contiguous():
            return input
        if name == "preserve_format":  # refused only when a copy is needed, as in PyTorch
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return FUNCTIONS["clone"](input)  # row-major, whatever the strides
    return input if input.is_contiguous(memory_format) else clone(input, memory_format=memory_format)


def _flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    ndim = input._data.ndim
    if ndim == 0:
        return input.reshape((1,))
    s, e = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._data.shape
    return input.reshape(shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def declarations() -> list[OpDecl]:
    from . import complex_views

    return complex_views.declarations() + [
        OpDecl("view", "(input: Tensor, size)", _view_meta, kind=VIEW, export=False,
               doc="The same data with another shape; the shape must be compatible with the strides."),
        OpDecl("reshape", "(input: Tensor, shape)", None, kind=VIEW, composite=_reshape,
               doc="The same data with another shape: a view when the strides allow, else a copy."),
        OpDecl("transpose", "(input: Tensor, dim0, dim1)", _transpose_meta, kind=VIEW,
               doc="A view with ``dim0`` and ``dim1`` swapped."),
        OpDecl("permute", "(input: Tensor, dims)", _permute_meta, kind=VIEW,
               doc="A view with the dims reordered."),
        OpDecl("t", "(input: Tensor)", _t_meta, kind=VIEW, doc="Transposes a tensor of at most 2 dims."),
        OpDecl("expand", "(input: Tensor, size)", _expand_meta, kind=VIEW, export=False,
               doc="A view broadcast to ``size`` (-1 keeps a dim); no memory is allocated."),
        OpDecl("squeeze", "(input: Tensor, dim=None)", _squeeze_meta, kind=VIEW,
               doc="A view without the dims of size 1 (only ``dim`` when given)."),
        OpDecl("unsqueeze", "(input: Tensor, dim)", _unsqueeze_meta, kind=VIEW,
               doc="A view with a new dim of size 1 at ``dim``."),
        OpDecl("narrow", "(input: Tensor, dim, start, length)", _narrow_meta, kind=VIEW,
               doc="A view of ``length`` elements of ``dim`` from ``start``."),
        OpDecl("select", "(input: Tensor, dim, index)", _select_meta, kind=VIEW,
               doc="A view of one index along ``dim``, which is removed."),
        OpDecl("unfold", "(input: Tensor, dimension, size, step)", _unfold_meta, kind=VIEW, export=False,
               doc="A view of all slices of ``size`` elements along ``dimension``, ``step`` apart."),
        OpDecl("as_strided", "(input: Tensor, size, stride, storage_offset=None)", _as_strided_meta, kind=VIEW,
               doc="A view of the input's storage with the given sizes, strides and offset."),
        OpDecl("basic_index", "(input: Tensor, index)", _basic_index_meta, kind=VIEW, export=False, method=False,
               doc="The view ``input[index]`` for a normalised tuple of ints, slices and None."),
        OpDecl("unbind", "(input: Tensor, dim=0)", None, kind=VIEW, composite=_unbind,
               doc="The slices along ``dim``, as a tuple of views."),
        OpDecl("contiguous", "(input: Tensor, memory_format=None)", None, kind=VIEW, composite=_contiguous,
               export=False, doc="The tensor itself if contiguous, else a contiguous copy."),
        OpDecl("flatten", "(input: Tensor, start_dim=0, end_dim=-1)", None, kind=VIEW, composite=_flatten,
               doc="Flattens dims ``start_dim`` to ``end_dim`` into one."),
    ]


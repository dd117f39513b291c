"""Declarations of joining, splitting and reordering ops: cat, stack, split, flip, roll, repeat, movedim...

``cat``, ``flip``, ``roll`` and ``repeat`` are primitives (a backend kernel each); the rest are
composites written with them and with the view ops, so that every backend runs them and
autograd differentiates them through their parts. Pieces that PyTorch returns as views
(``split``, ``chunk``, ``tensor_split``, ``movedim``, ``unflatten``, ``broadcast_to``) are views here.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import VIEW, OpDecl
from ..ops.meta import broadcast_shapes, fmt_shape, wrap_dim, wrap_dim_of_dims, wrap_dims
from ..ops.sizes import allocation_error, checked_nbytes, nonnegative_total


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _ints(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple (PyTorch's ``int[]`` arguments accept both)."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int):
        return (value,)
    # operator.index, not int(): "2" and 2.5 are refused (TypeError) before they reach a kernel
    return tuple(operator.index(v) for v in value)


def result_of(composite: Any) -> Any:
    """The meta function of a compute composite: the shape and dtype of what the composite returns.

    Dispatch never calls it (a composite checks its own arguments); it serves callers that ask an
    op for its output's shape and dtype without running it on data of their own.
    """
    def meta(*args: Any) -> tuple:
        result = composite(*args)
        return tuple(result._data.shape), result._dtype
    meta.__name__ = f"{composite.__name__}_meta"
    return meta


# -- cat and stack ---------------------------------------------------------------------

def _skipped(t: Tensor) -> bool:
    """PyTorch's legacy rule: a 1-D empty tensor joins anything (it is left out of the checks)."""
    return t._data.shape == (0,)


def cat_shape(tensors: Sequence[Tensor], dim: int) -> tuple[tuple[int, ...], int]:
    """The shape of ``cat(tensors, dim)`` and the wrapped dim, or PyTorch's error."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError("flambeau.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, t) for i, t in enumerate(tensors) if not _skipped(t)]
    if not kept:
        wrap_dim(dim, 1)
        return (0,), 0
    first = kept[0][1]._data.shape
    d = wrap_dim(dim, len(first))
    total = 0
    for i, t in kept:
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        for k, (a, b) in enumerate(zip(first, shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
        total += shape[d]
    return first[:d] + (total,) + first[d + 1:], d


def _cat_meta(tensors: Sequence[Tensor], dim: int = 0) -> tuple:
    # The common case in one pass (one dtype, one rank, no legacy empties); anything else, and
    # every error, goes through cat_shape.
    if tensors.__class__ in (list, tuple) and tensors and dim.__class__ is int:
        first = tensors[0]
        shape, dtype = first._data.shape, first._dtype
        nd = len(shape)
        if nd and -nd <= dim < nd and shape != (0,):
            d = dim % nd
            total = 0
            for t in tensors:
                s = t._data.shape
                if t._dtype is not dtype:
                    break
                # equal shapes (the usual case) need no slicing to compare off the joined dim
                if s != shape and (len(s) != nd or s[:d] != shape[:d] or s[d + 1:] != shape[d + 1:] or s == (0,)):
                    break
                total += s[d]
            else:
                return shape[:d] + (total,) + shape[d + 1:], dtype
    shape, _ = cat_shape(tensors, dim)
    return shape, _dtypes.result_type_of([t._dtype for t in tensors], [], [])


def _stack_check(tensors: Sequence[Tensor], dim: int) -> int:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {fmt_shape(first)} at entry 0 "
                               f"and {fmt_shape(t._data.shape)} at entry {i}")
    return wrap_dim(dim, len(first) + 1)


def _stack_meta(tensors: Sequence[Tensor], dim: int = 0) -> tuple:
    if tensors.__class__ in (list, tuple) and tensors and dim.__class__ is int:  # the common case, one pass
        first = tensors[0]
        shape, dtype = first._data.shape, first._dtype
        nd = len(shape) + 1
        if -nd <= dim < nd:
            for t in tensors:
                if t._data.shape != shape or t._dtype is not dtype:
                    break
            else:
                d = dim % nd
                return shape[:d] + (len(tensors),) + shape[d:], dtype
    d = _stack_check(tensors, dim)
    shape, dtype = tensors[0]._data.shape, tensors[0]._dtype
    if any(t._dtype is not dtype for t in tensors):
        dtype = _dtypes.result_type_of([t._dtype for t in tensors], [], [])
    return shape[:d] + (len(tensors),) + shape[d:], dtype


def _stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    d = _stack_check(tensors, dim)
    return _fn("cat")([t.unsqueeze(d) for t in tensors], d)


def _atleast(input: Tensor, ndim: int) -> Tensor:
    shape = input._data.shape
    if len(shape) >= ndim:
        return input
    if ndim == 3 and len(shape) == 2:
        return input.unsqueeze(-1)
    if ndim == 3 and len(shape) == 1:
        return input.reshape((1, shape[0], 1))
    return input.reshape((1,) * (ndim - len(shape)) + tuple(shape))


def _nonempty(name: str, tensors: Sequence[Tensor]) -> None:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _hstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty("hstack", tensors)
    ts = [_atleast(t, 1) for t in tensors]
    return _fn("cat")(ts, 0 if ts[0]._data.ndim == 1 else 1)


def _vstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty("vstack", tensors)
    return _fn("cat")([_atleast(t, 2) for t in tensors], 0)


def _dstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty("dstack", tensors)
    return _fn("cat")([_atleast(t, 3) for t in tensors], 2)


def _column_stack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty("column_stack", tensors)
    cols = [t.reshape((t.numel(), 1)) if t._data.ndim <= 1 else t for t in tensors]
    return _fn("cat")(cols, 1)


# -- splitting (views) ------------------------------------------------------------------

def _split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    if tensor._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor._data.ndim)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = _ints(split_size_or_sections)
        if any(s < 0 for s in sections) or sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={list(sections)}")
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        count = max(1, math.ceil(size / step)) if step else 1
        sections = tuple(min(step, size - i * step) for i in range(count))
    pieces, start = [], 0
    for s in sections:
        pieces.append(tensor.narrow(d, start, s))
        start += s
    return tuple(pieces)


def _chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    step = math.ceil(size / chunks)
    if step == 0:  # an empty dim: PyTorch gives `chunks` empty pieces
        return tuple(input.narrow(d, 0, 0) for _ in range(chunks))
    return _split(input, step, d)


def _tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._dtype is not _dtypes.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{spec._dtype}")
        if spec._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {spec._data.ndim} dims")
        spec = spec.item() if spec._data.ndim == 0 else spec.tolist()
    if isinstance(spec, (list, tuple)):
        bounds = [0, *(int(i) for i in spec), size]
        pieces = []
        for a, b in zip(bounds, bounds[1:]):
            a = min(max(a + size if a < 0 else a, 0), size)
            b = min(max(b + size if b < 0 else b, 0), size)
            pieces.append(input.narrow(d, a, max(b - a, 0)))
        return tuple(pieces)
    n = int(spec)
    if n <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {n}")
    small, extra = divmod(size, n)
    pieces, start = [], 0
    for i in range(n):
        length = small + (1 if i < extra else 0)
        pieces.append(input.narrow(d, start, length))
        start += length
    return tuple(pieces)


# -- reordering (views) -----------------------------------------------------------------

def _movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    ndim = input._data.ndim
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src, dst = wrap_dims(src, ndim), wrap_dims(dst, ndim)
    if ndim == 0:  # a 0-d tensor takes dim 0 / -1 (as PyTorch's): nothing moves
        return input.permute(())
    order = [-1] * ndim
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(i for i in range(ndim) if i not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return input.permute(order)


def _unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    sizes = _ints(sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = wrap_dim(dim, input._data.ndim)
    have = input._data.shape[d]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or have % known:
            raise RuntimeError(f"unflatten: Provided sizes {fmt_shape(sizes)} don't multiply up to the size of dim "
                               f"{dim} ({have}) in the input tensor")
        sizes = tuple(have // known if s == -1 else s for s in sizes)
    elif known != have:
        raise RuntimeError(f"unflatten: Provided sizes {fmt_shape(sizes)} don't multiply up to the size of dim "
                           f"{dim} ({have}) in the input tensor")
    shape = input._data.shape
    return input.reshape(shape[:d] + sizes + shape[d + 1:])


def _broadcast_to(input: Tensor, size: Any) -> Tensor:
    return input.expand(_ints(size))


def _broadcast_tensors(tensors: Sequence[Tensor]) -> tuple:
    shape = broadcast_shapes(*(t._data.shape for t in tensors)) if tensors else ()
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in tensors)


def _atleast_fn(ndim: int):
    def composite(input: Tensor) -> Tensor:
        return _atleast(input, ndim)
    composite.__name__ = f"_atleast_{ndim}d"
    return composite


# -- copies: flip, roll, repeat, tile ----------------------------------------------------

def _flip_meta(input: Tensor, dims: Any) -> tuple:
    nd = input._data.ndim
    if dims.__class__ in (tuple, list) and all(d.__class__ is int and -nd <= d < nd for d in dims) \
            and (len(dims) < 2 or len({d % nd for d in dims}) == len(dims)):
        return input._data.shape, input._dtype  # the common case, checked without building errors
    wrap_dims(_ints(dims), nd)
    return input._data.shape, input._dtype


def _roll_meta(input: Tensor, shifts: Any, dims: Any = None) -> tuple:
    shifts = _ints(shifts)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is unspecified, but got {len(shifts)}")
    else:
        dims = _ints(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        for d in dims:
            wrap_dim_of_dims(d, input._data.ndim)
    return input._data.shape, input._dtype


def repeat_shape(shape: Sequence[int], repeats: Any) -> tuple[int, ...]:
    repeats = _ints(repeats)
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(repeats)}: {fmt_shape(repeats)}")
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    return tuple(p * r for p, r in zip(padded, repeats))


def _repeat_meta(input: Tensor, repeats: Any) -> tuple:
    return repeat_shape(input._data.shape, repeats), input._dtype


def _tile(input: Tensor, dims: Any) -> Tensor:
    dims = _ints(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return _fn("repeat")(input, dims)


def _fliplr(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _fn("flip")(input, (1,))


def _flipud(input: Tensor) -> Tensor:
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _fn("flip")(input, (0,))


def _rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    dims = _ints(dims)
    ndim = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    a, b = wrap_dim(dims[0], ndim), wrap_dim(dims[1], ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    k %= 4
    flip = _fn("flip")
    if k == 1:
        return flip(input, (b,)).transpose(a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return flip(input, (a,)).transpose(a, b)
    return input.clone()


def _repeat_counts(repeats: Tensor, output_size: Any) -> tuple[np.ndarray, int]:
    """The counts (a private int64 copy: checked, then used) and their exact total, checked."""
    counts = np.array(repeats._host(), dtype=np.int64)
    if counts.size and int(counts.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    total = nonnegative_total(counts)
    if output_size is not None and total != output_size:
        raise RuntimeError("allocated size does not match required size")
    return counts, total


def _repeat_plan(input: Tensor, repeats: Any, dim: Any, output_size: Any) -> tuple:
    """Every check of repeat_interleave, before any work: ``(input, d, counts, repeats, shape)`` with
    ``input`` flattened or made 1-d as the op sees it, ``counts`` an int64 array (a tensor of counts)
    or None (one count, ``repeats``), and ``shape`` the result's, whose size is checked."""
    if repeats is None:  # repeat_interleave(repeats): the indices 0..n-1, each repeated
        if input._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if input._dtype not in (_dtypes.int64, _dtypes.int32):
            raise RuntimeError("repeats has to be Long or Int tensor")
        counts, total = _repeat_counts(input, None)
        return input, 0, counts, None, checked_shape((total,), input._dtype.itemsize)
    if dim is None:
        input = input.reshape((-1,))
        d = 0
    else:
        d = wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        input = input.reshape((1,))
    shape = input._data.shape
    size = shape[d]
    if isinstance(repeats, Tensor) and repeats._data.ndim == 1 and repeats.numel() != 1:
        if repeats._data.shape[0] != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats._data.shape[0]} and input.size({d}) = {size}")
        counts, total = _repeat_counts(repeats, output_size)
        checked_shape((total,), 8)  # the index built from the counts
        return input, d, counts, None, checked_shape(shape[:d] + (total,) + shape[d + 1:], input._dtype.itemsize)
    if isinstance(repeats, Tensor):
        if repeats._data.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        repeats = int(repeats.item())
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != size * repeats:
        raise RuntimeError("allocated size does not match required size")
    return input, d, None, repeats, checked_shape(shape[:d] + (size * repeats,) + shape[d + 1:],
                                                  input._dtype.itemsize)


def checked_shape(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    checked_nbytes(shape, itemsize)
    return shape


def _repeat_interleave_meta(input: Tensor, repeats: Any = None, dim: Any = None, output_size: Any = None) -> tuple:
    return _repeat_plan(input, repeats, dim, output_size)[4], input._dtype


def _repeat_interleave(input: Tensor, repeats: Any = None, dim: Any = None, output_size: Any = None) -> Tensor:
    from .._creation import as_tensor

    counts_only = repeats is None
    input, d, counts, repeats, shape = _repeat_plan(input, repeats, dim, output_size)
    if counts is not None:
        try:  # the indices 0..n-1, each repeated: numpy builds them in one call
            index = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        except MemoryError:
            raise allocation_error(checked_nbytes((int(counts.sum()),), 8)) from None
        if counts_only:
            return as_tensor(index, dtype=input._dtype, device=input._device)
        index = as_tensor(index, dtype=_dtypes.int64, device=input._device)
        return _fn("index")(input.movedim(d, 0), [index]).movedim(0, d)
    spread = input.unsqueeze(d + 1).expand(input._data.shape[:d + 1] + (repeats,) + input._data.shape[d + 1:])
    result = spread.reshape(shape)
    return result.clone() if repeats == 1 else result  # a copy, as PyTorch's, never a view


def declarations() -> list[OpDecl]:
    from ._docs_shape import with_docs

    return with_docs([
        OpDecl("cat", "(tensors: TensorList, dim=0)", _cat_meta, method=False,
               doc="Joins tensors along an existing dim ``dim``; dtypes promote as in arithmetic.\n\n"
                   "Example::\n\n    >>> fb.cat([fb.ones(2, 3), fb.zeros(1, 3)]).shape\n    flambeau.Size([3, 3])"),
        OpDecl("stack", "(tensors: TensorList, dim=0)", _stack_meta, composite=_stack, method=False,
               doc="Joins equal-size tensors along a new dim ``dim``; dtypes promote as in ``cat``.\n\n"
                   "A backend may give it a kernel; elsewhere it is ``cat`` of the tensors unsqueezed at ``dim``."),
        OpDecl("hstack", "(tensors: TensorList)", result_of(_hstack), composite=_hstack, method=False,
               doc="Joins along dim 1 (dim 0 for 1-D tensors)."),
        OpDecl("vstack", "(tensors: TensorList)", result_of(_vstack), composite=_vstack, method=False,
               doc="Joins along dim 0, 1-D tensors taken as rows."),
        OpDecl("dstack", "(tensors: TensorList)", result_of(_dstack), composite=_dstack, method=False,
               doc="Joins along dim 2, tensors first made at least 3-D."),
        OpDecl("column_stack", "(tensors: TensorList)", result_of(_column_stack), composite=_column_stack, method=False,
               doc="Joins along dim 1, 0-D and 1-D tensors taken as columns."),
        OpDecl("split", "(tensor: Tensor, split_size_or_sections, dim=0)", None, kind=VIEW, composite=_split,
               doc="Views of pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the "
                   "given section sizes."),
        OpDecl("chunk", "(input: Tensor, chunks, dim=0)", None, kind=VIEW, composite=_chunk,
               doc="At most ``chunks`` views of equal size (the last may be smaller) along ``dim``."),
        OpDecl("tensor_split", "(input: Tensor, indices_or_sections, dim=0)", None, kind=VIEW,
               composite=_tensor_split,
               doc="Views split into ``n`` nearly equal sections, or at the given indices, along ``dim``."),
        OpDecl("movedim", "(input: Tensor, source, destination)", None, kind=VIEW, composite=_movedim,
               doc="A view with dims ``source`` moved to positions ``destination``."),
        OpDecl("unflatten", "(input: Tensor, dim, sizes)", None, kind=VIEW, composite=_unflatten,
               doc="Expands dim ``dim`` into ``sizes`` (one may be -1)."),
        OpDecl("broadcast_to", "(input: Tensor, size)", None, kind=VIEW, composite=_broadcast_to,
               doc="A view broadcast to ``size``."),
        OpDecl("broadcast_tensors", "(tensors: TensorList)", None, kind=VIEW, composite=_broadcast_tensors,
               method=False, doc="Views of the tensors broadcast to their common shape."),
        OpDecl("atleast_1d", "(input: Tensor)", None, kind=VIEW, composite=_atleast_fn(1),
               doc="A view with at least 1 dim."),
        OpDecl("atleast_2d", "(input: Tensor)", None, kind=VIEW, composite=_atleast_fn(2),
               doc="A view with at least 2 dims (new dims in front)."),
        OpDecl("atleast_3d", "(input: Tensor)", None, kind=VIEW, composite=_atleast_fn(3),
               doc="A view with at least 3 dims (1-D ``(n,)`` becomes ``(1, n, 1)``, 2-D gets a last dim)."),
        OpDecl("flip", "(input: Tensor, dims)", _flip_meta, doc="A copy reversed along ``dims``."),
        OpDecl("fliplr", "(input: Tensor)", result_of(_fliplr), composite=_fliplr, doc="A copy reversed along dim 1."),
        OpDecl("flipud", "(input: Tensor)", result_of(_flipud), composite=_flipud, doc="A copy reversed along dim 0."),
        OpDecl("roll", "(input: Tensor, shifts, dims=None)", _roll_meta,
               doc="A copy rolled by ``shifts`` along ``dims`` (flattened when ``dims`` is None)."),
        OpDecl("rot90", "(input: Tensor, k=1, dims=(0, 1))", result_of(_rot90), composite=_rot90,
               doc="A copy rotated by 90 degrees ``k`` times in the plane of ``dims``."),
        OpDecl("repeat", "(input: Tensor, repeats)", _repeat_meta, export=False,
               doc="A copy repeated ``repeats[i]`` times along each dim (new leading dims as needed)."),
        OpDecl("tile", "(input: Tensor, dims)", result_of(_tile), composite=_tile,
               doc="``repeat`` with ``dims`` padded with ones in front to the input's dims."),
        OpDecl("repeat_interleave", "(input: Tensor, repeats=None, dim=None, *, output_size=None)",
               _repeat_interleave_meta,
               composite=_repeat_interleave,
               doc="Each element repeated ``repeats`` times (an int, or a tensor of counts) along ``dim`` "
                   "(the flattened input when None)."),
    ])

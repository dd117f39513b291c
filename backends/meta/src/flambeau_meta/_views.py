"""View kernels: each computes the shape, strides and offset of a view; no element is touched.

The op's meta function (in the package that declared the op) has already checked the
arguments, so these only do the arithmetic. Strides are in elements here, as PyTorch counts them.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ._array import MetaArray


def _wrap(dim: int, ndim: int) -> int:
    return dim % ndim if ndim else 0


def _row_major(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return list(reversed(strides))


def _infer(size: Sequence[int], numel: int) -> list[int]:
    shape = [int(s) for s in size]
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = numel // known if known else 0
    return shape


def view_strides(old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]) -> list[int] | None:
    """Strides presenting the same elements in ``new_shape``, or None when no view can.

    Dims of the old shape are taken in contiguous chunks (runs whose strides nest); each chunk
    must be split or merged exactly by the new dims.
    """
    if not old_shape or math.prod(old_shape) == 0:
        return _row_major(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = old_strides[-1]
    chunk_numel, view_numel = 1, 1
    for d in range(len(old_shape) - 1, -1, -1):
        chunk_numel *= old_shape[d]
        chunk_ends = d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != chunk_numel * base)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
            new_strides[view_d] = view_numel * base
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            base, chunk_numel, view_numel = old_strides[d - 1], 1, 1
    return new_strides if view_d == -1 else None


def view(input: MetaArray, size):
    shape = _infer(size, input.size)
    strides = view_strides(input.shape, input.element_strides(), shape)
    if strides is None:  # the meta function refuses these; never reached through the dispatcher
        raise RuntimeError("view size is not compatible with input tensor's size and stride")
    return input.derive(shape, strides, input.offset)


def transpose(input: MetaArray, dim0, dim1):
    shape, strides = list(input.shape), input.element_strides()
    if input.ndim:
        a, b = _wrap(dim0, input.ndim), _wrap(dim1, input.ndim)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
    return input.derive(shape, strides, input.offset)


def permute(input: MetaArray, dims):
    order = [_wrap(d, input.ndim) for d in dims]
    strides = input.element_strides()
    return input.derive([input.shape[d] for d in order], [strides[d] for d in order], input.offset)


def t(input: MetaArray):
    return transpose(input, 0, 1) if input.ndim == 2 else input.derive(input.shape, input.element_strides(),
                                                                        input.offset)


def expand(input: MetaArray, size):
    lead = len(size) - input.ndim
    old = input.element_strides()
    shape, strides = [], []
    for i, target in enumerate(size):
        if i < lead:
            shape.append(int(target))
            strides.append(0)
            continue
        have = input.shape[i - lead]
        if target == -1 or target == have:
            shape.append(have)
            strides.append(old[i - lead])
        else:  # a size-1 dim repeated: every index reads the same element
            shape.append(int(target))
            strides.append(0)
    return input.derive(shape, strides, input.offset)


def squeeze(input: MetaArray, dim):
    if dim is None:
        chosen = {d for d, s in enumerate(input.shape) if s == 1}
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        chosen = {_wrap(d, input.ndim) for d in dims} if input.ndim else set()
        chosen = {d for d in chosen if input.shape[d] == 1}
    strides = input.element_strides()
    keep = [d for d in range(input.ndim) if d not in chosen]
    return input.derive([input.shape[d] for d in keep], [strides[d] for d in keep], input.offset)


def unsqueeze(input: MetaArray, dim):
    d = dim % (input.ndim + 1)
    shape, strides = list(input.shape), input.element_strides()
    # PyTorch's choice for the new dim's stride: what stepping over the next dim would take.
    new_stride = shape[d] * strides[d] if d < input.ndim else 1
    shape.insert(d, 1)
    strides.insert(d, new_stride)
    return input.derive(shape, strides, input.offset)


def narrow(input: MetaArray, dim, start, length):
    d = _wrap(dim, input.ndim)
    if start < 0:
        start += input.shape[d]
    shape, strides = list(input.shape), input.element_strides()
    shape[d] = length
    return input.derive(shape, strides, input.offset + start * strides[d])


def select(input: MetaArray, dim, index):
    d = _wrap(dim, input.ndim)
    if index < 0:
        index += input.shape[d]
    shape, strides = list(input.shape), input.element_strides()
    offset = input.offset + index * strides[d]
    del shape[d], strides[d]
    return input.derive(shape, strides, offset)


def unfold(input: MetaArray, dimension, size, step):
    if input.ndim == 0:
        return input.derive((size,), (1,), input.offset)
    d = _wrap(dimension, input.ndim)
    shape, strides = list(input.shape), input.element_strides()
    inner = strides[d]
    shape[d] = (shape[d] - size) // step + 1
    strides[d] = inner * step
    return input.derive(shape + [size], strides + [inner], input.offset)


def as_strided(input: MetaArray, size, stride, storage_offset):
    offset = input.offset if storage_offset is None else storage_offset
    return input.derive(size, stride, offset)


def basic_index(input: MetaArray, index):
    """``input[index]`` for a tuple of in-range non-negative ints, slices and None."""
    old_strides = input.element_strides()
    shape: list[int] = []
    strides: list[int] = []
    offset, dim = input.offset, 0
    for item in index:
        if item is None:
            shape.append(1)
            strides.append(input.shape[dim] * old_strides[dim] if dim < input.ndim else 1)
            continue
        if isinstance(item, slice):
            start, stop, step = item.indices(input.shape[dim])
            length = len(range(start, stop, step))
            if length:
                offset += start * old_strides[dim]
            shape.append(length)
            strides.append(old_strides[dim] * step)
        else:
            offset += int(item) * old_strides[dim]
        dim += 1
    shape += input.shape[dim:]
    strides += old_strides[dim:]
    return input.derive(shape, strides, offset)


def _complex_part(part: int):
    """``real`` (part 0) and ``imag`` (part 1): the same byte strides over real-typed elements, two per
    complex element (a real tensor's ``real`` is the tensor itself)."""
    def kernel(input: MetaArray):
        if input.dtype.kind != "c":
            return input
        real = input.dtype.type(0).real.dtype
        return MetaArray(input.shape, real, input.strides, 2 * input.offset + part, 2 * input.storage_size)
    return kernel


def view_as_real(input: MetaArray):
    """The complex storage read as reals: offsets and storage double, a trailing dim of two."""
    real = np.dtype(input.dtype.type(0).real.dtype)
    return MetaArray(input.shape + (2,), real, input.strides + (real.itemsize,), 2 * input.offset,
                     2 * input.storage_size)


def view_as_complex(input: MetaArray):
    """Pairs of reals read as complex elements: the last dim goes, byte strides stay (the meta
    function checked that they are whole complex elements)."""
    cplx = np.result_type(input.dtype, np.complex64)
    return MetaArray(input.shape[:-1], cplx, input.strides[:-1], input.offset // 2, input.storage_size // 2)


def conj(input: MetaArray):
    """The conjugate bit lives on the Tensor: the same geometry."""
    return input.derive(input.shape, input.element_strides(), input.offset)


KERNELS: dict[str, Callable[..., Any]] = {
    "_conj": conj,
    "view_as_real": view_as_real, "view_as_complex": view_as_complex,
    "real": _complex_part(0), "imag": _complex_part(1),
    "view": view, "transpose": transpose, "permute": permute, "t": t, "expand": expand, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "narrow": narrow, "select": select, "unfold": unfold, "as_strided": as_strided,
    "basic_index": basic_index,
}

"""Kernels for joining and reordering copies, triangles, diagonals, and the creation extras.

The copies (cat, stack, flip, roll, repeat, tril/triu) go through the C++ ``copy_into`` and
``triangle_into``: numpy moves memory on one thread and reverses a row element by element, while
these split the work over the kernel threads. Whatever they decline (mixed dtypes, unaligned or
overlapping arrays) falls back to numpy. Meta functions have checked every argument.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import Any, Callable

import numpy as np

from .. import _storage

try:
    from .._C import copy_into as _copy_into, copy_many as _copy_many, triangle_into as _triangle_into
except (ImportError, AttributeError):  # a source checkout without the extension built
    _copy_into = _copy_many = _triangle_into = None


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` (src broadcast, cast unsafely like PyTorch's copy_), threaded when it can be."""
    if _copy_into is None or not _copy_into(dst, src):
        np.copyto(dst, src, casting="unsafe")


def _ints(value: Any) -> tuple[int, ...]:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return (int(value),) if isinstance(value, (int, np.integer)) else tuple(int(v) for v in value)


def _writeable_diagonal(out: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The diagonal of ``out`` as a writeable view (numpy's ``diagonal`` is read-only)."""
    n1, n2 = out.shape[dim1], out.shape[dim2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    s1, s2 = out.strides[dim1], out.strides[dim2]
    keep = [i for i in range(out.ndim) if i not in (dim1, dim2)]
    base = out
    if length:  # start at the diagonal's first element (a view: out may be strided)
        first = {dim1: max(0, -offset), dim2: max(0, offset)}
        base = out[tuple(slice(first[i], None) if i in first else slice(None) for i in range(out.ndim))]
    return np.lib.stride_tricks.as_strided(
        base, tuple(out.shape[i] for i in keep) + (length,), tuple(out.strides[i] for i in keep) + (s1 + s2,),
        writeable=True)


def diagonal(input, offset, dim1, dim2):
    ndim = input.ndim
    a, b = dim1 % ndim, dim2 % ndim
    n1, n2 = input.shape[a], input.shape[b]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    item = input.itemsize
    strides = [s // item for s in input.strides]
    start = _storage.storage_offset(input)
    if length:
        start += offset * strides[b] if offset >= 0 else -offset * strides[a]
    keep = [i for i in range(ndim) if i not in (a, b)]
    return _storage.as_strided(input, tuple(input.shape[i] for i in keep) + (length,),
                               tuple(strides[i] for i in keep) + (strides[a] + strides[b],), start)


#: Below this many output elements a copy runs on one thread anyway, and numpy's single joining call
#: costs less than a loop of per-input copies.
_SMALL = 32768


def cat(tensors, dim, out):
    if out.size < _SMALL:
        try:  # legacy 1-D empties among n-D inputs make numpy refuse: the loop below skips them
            np.concatenate(tensors, axis=dim, out=out, casting="unsafe")
            return
        except ValueError:
            pass
    d = dim % out.ndim
    lead = (slice(None),) * d
    start, targets, parts = 0, [], []
    for t in tensors:
        if t.shape == (0,) and out.ndim != 1:  # PyTorch's legacy rule: 1-D empties join anything
            continue
        stop = start + t.shape[d]
        targets.append(out[lead + (slice(start, stop),)])
        parts.append(t)
        start = stop
    if _copy_many is not None and _copy_many(targets, parts):
        return  # one threaded pass over every input
    for target, t in zip(targets, parts):
        _copy(target, t)


_REVERSED = slice(None, None, -1)


def stack(tensors, dim, out):
    lead = (slice(None),) * (dim % out.ndim)
    if out.size < _SMALL:  # numpy's item assignment: no view to build per input
        for i, t in enumerate(tensors):
            out[lead + (i,)] = t
        return
    for i, t in enumerate(tensors):
        _copy(out[lead + (i, Ellipsis)], t)  # the Ellipsis keeps a 0-d result a view, not a scalar


def flip(input, dims, out):
    if input.ndim == 0:  # dim 0 / -1 of a 0-d tensor (the meta function took them): nothing to reverse
        _copy(out, input)
        return
    # A reversed-slice view copied into out: cheaper than np.flip's axis normalisation.
    index: list[Any] = [slice(None)] * input.ndim
    for d in (dims if dims.__class__ in (tuple, list) else _ints(dims)):
        index[d] = _REVERSED
    index.append(Ellipsis)  # keeps a 0-d input an array
    _copy(out, input[tuple(index)])


def _roll_pieces(n: int, shift: int) -> list[tuple[slice, slice]]:
    """(destination, source) slices that roll a dim of size ``n`` by ``shift``: two block copies."""
    shift = shift % n if n else 0
    if shift == 0:
        return [(slice(None), slice(None))]
    return [(slice(shift, None), slice(None, n - shift)), (slice(None, shift), slice(n - shift, None))]


def _roll_into(src, shifts, axes, dst):
    """``dst = np.roll(src, shifts, axes)`` as block copies (two per rolled dim), without a temporary."""
    per_axis = [_roll_pieces(src.shape[a], s) for a, s in zip(axes, shifts)]
    for pieces in product(*per_axis):
        dst_index, src_index = [slice(None)] * src.ndim, [slice(None)] * src.ndim
        for a, (to, frm) in zip(axes, pieces):
            dst_index[a], src_index[a] = to, frm
        _copy(dst[tuple(dst_index)], src[tuple(src_index)])


def roll(input, shifts, dims, out):
    shifts = _ints(shifts)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if not out.flags.c_contiguous:  # no flat view of out: go through a temporary
            np.copyto(out, np.roll(input.reshape(-1), shifts[0]).reshape(input.shape))
            return
        _roll_into(input.reshape(-1), shifts[:1], (0,), out.reshape(-1))
        return
    dims = tuple(d % max(input.ndim, 1) for d in _ints(dims))
    if not input.ndim:
        _copy(out, input)
        return
    if len(dims) == 1:  # the common case, without _roll_into's index lists
        lead = (slice(None),) * dims[0]
        for to, frm in _roll_pieces(input.shape[dims[0]], shifts[0]):
            _copy(out[lead + (to,)], input[lead + (frm,)])
        return
    # A dim named twice rolls by the sum of its shifts, as in np.roll.
    total: dict[int, int] = {}
    for d, s in zip(dims, shifts):
        total[d] = total.get(d, 0) + s
    _roll_into(input, tuple(total.values()), tuple(total), out)


def repeat(input, repeats, out):
    repeats = _ints(repeats)
    padded = input.reshape((1,) * (len(repeats) - input.ndim) + input.shape)
    if out.size == 0:
        return
    # Broadcast the input over a new axis before each dim, then fold: one copy, no temporary.
    expanded_shape = []
    for r, n in zip(repeats, padded.shape):
        expanded_shape += [r, n]
    spread = np.broadcast_to(padded.reshape(sum(([1, n] for n in padded.shape), [])), expanded_shape)
    _copy(out.reshape(expanded_shape), spread)


def diag_embed(input, offset, dim1, dim2, out):
    out.fill(0)
    ndim = out.ndim
    a, b = dim1 % ndim, dim2 % ndim
    target = _writeable_diagonal(out, offset, a, b)
    np.copyto(target, input.reshape(target.shape) if input.ndim == 0 else input)


@lru_cache(maxsize=64)
def _small_drop_mask(rows: int, cols: int, diagonal: int, lower: bool) -> np.ndarray:
    return _drop_mask(rows, cols, diagonal, lower)


def _drop_mask(rows: int, cols: int, diagonal: int, lower: bool) -> np.ndarray:
    """Where tril (``lower``) or triu sets zeros."""
    return ~np.tri(rows, cols, diagonal, dtype=bool) if lower else np.tri(rows, cols, diagonal - 1, dtype=bool)


def _triangle(input, diagonal, out, lower: bool):
    rows, cols = input.shape[-2:]
    # Past -rows or cols the triangle is all or nothing: clamp, so that no row + diagonal overflows
    # int64 (a diagonal near 2**63 wrapped round to a negative one).
    diagonal = min(max(diagonal, -rows - 1), cols + 1)
    if _triangle_into is not None and _triangle_into(out, input, diagonal, lower):
        return
    # Small masks are cached (they dominate a small call); large ones cost little next to the copy.
    drop = _small_drop_mask(rows, cols, diagonal, lower) if rows * cols <= 4096 else \
        _drop_mask(rows, cols, diagonal, lower)
    if out is not input:
        out[...] = input
    np.copyto(out, out.dtype.type(0), where=drop)


def tril(input, diagonal, out):
    _triangle(input, diagonal, out, True)


def triu(input, diagonal, out):
    _triangle(input, diagonal, out, False)


def range_(start, end, step, dtype, device, requires_grad, out):
    start = start.item() if isinstance(start, np.ndarray) else start
    step = step.item() if isinstance(step, np.ndarray) else step
    np.copyto(out, start + step * np.arange(out.shape[0], dtype=np.float64), casting="unsafe")


def _triangle_indices(row: int, col: int, offset: int, lower: bool, out: np.ndarray) -> None:
    """The coordinates of a triangle, row by row, into ``out`` (2, count): built from each row's
    first column and length, never from a ``row x col`` mask (numpy's tril_indices builds one)."""
    if out.shape[1] == 0:
        return
    offset = min(max(offset, -row - 1), col + 1)  # beyond these the triangle is empty or whole: int64-safe
    # Only rows holding at least one entry: there are at most as many as entries.
    if lower:
        first_row, end_row = min(max(-offset, 0), row), row
    else:
        first_row, end_row = 0, min(max(col - offset, 0), row)
    rows = np.arange(first_row, end_row, dtype=np.int64)
    if lower:
        starts = np.zeros_like(rows)
        lengths = np.minimum(rows + (offset + 1), col)
    else:
        starts = np.maximum(rows + offset, 0)
        lengths = col - starts
    at = np.cumsum(lengths) - lengths  # where each row's entries begin in the output
    np.copyto(out[0], np.repeat(rows, lengths), casting="unsafe")
    np.copyto(out[1], np.arange(out.shape[1], dtype=np.int64) - np.repeat(at - starts, lengths), casting="unsafe")


def tril_indices(row, col, offset, dtype, device, requires_grad, out):
    _triangle_indices(row, col, offset, True, out)


def triu_indices(row, col, offset, dtype, device, requires_grad, out):
    _triangle_indices(row, col, offset, False, out)


def complex_(real, imag, out):
    out.real = real
    out.imag = imag


KERNELS: dict[str, Callable[..., Any]] = {
    "diagonal": diagonal, "stack": stack,
    "cat": cat, "flip": flip, "roll": roll, "repeat": repeat, "diag_embed": diag_embed, "tril": tril,
    "triu": triu, "range": range_, "tril_indices": tril_indices, "triu_indices": triu_indices, "complex": complex_,
}

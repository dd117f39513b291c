"""numpy kernels for joining and reordering copies, triangles, diagonals, and the creation extras.

Each is one numpy call writing into the preallocated ``out`` (numpy's copy loops are as fast as a
hand-written one for these memory-bound moves). Meta functions have checked every argument.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .. import _storage


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


def cat(tensors, dim, out):
    try:  # the common case straight to numpy; legacy 1-D empties among n-D inputs make it refuse
        np.concatenate(tensors, axis=dim, out=out, casting="unsafe")
        return
    except ValueError:
        pass
    parts = [t for t in tensors if t.shape != (0,)]
    if parts:
        np.concatenate(parts, axis=dim % out.ndim, out=out, casting="unsafe")


_REVERSED = slice(None, None, -1)


def stack(tensors, dim, out):
    d = dim % out.ndim
    lead = (slice(None),) * d
    for i, t in enumerate(tensors):
        out[lead + (i,)] = t


def flip(input, dims, out):
    # A reversed-slice view copied into out: cheaper than np.flip's axis normalisation.
    index = [slice(None)] * input.ndim
    for d in (dims if dims.__class__ in (tuple, list) else _ints(dims)):
        index[d] = _REVERSED
    out[...] = input[tuple(index)]


def _roll_into(src, shift, axis, dst):
    """``dst = np.roll(src, shift, axis)`` as two block copies, without numpy's temporary."""
    n = src.shape[axis]
    shift = shift % n if n else 0
    if shift == 0:
        dst[...] = src
        return
    lead = (slice(None),) * axis
    dst[lead + (slice(shift, None),)] = src[lead + (slice(None, n - shift),)]
    dst[lead + (slice(None, shift),)] = src[lead + (slice(n - shift, None),)]


def roll(input, shifts, dims, out):
    shifts = _ints(shifts)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if not out.flags.c_contiguous:  # no flat view of out: go through a temporary
            np.copyto(out, np.roll(input.reshape(-1), shifts[0]).reshape(input.shape))
            return
        _roll_into(input.reshape(-1), shifts[0], 0, out.reshape(-1))
        return
    dims = tuple(d % max(input.ndim, 1) for d in _ints(dims))
    if len(dims) == 1 and input.ndim:
        _roll_into(input, shifts[0], dims[0], out)
        return
    np.copyto(out, np.roll(input, shifts, dims))


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
    np.copyto(out.reshape(expanded_shape), spread)


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


def tril_indices(row, col, offset, dtype, device, requires_grad, out):
    rows, cols = np.tril_indices(row, offset, col)
    out[0], out[1] = rows, cols


def triu_indices(row, col, offset, dtype, device, requires_grad, out):
    rows, cols = np.triu_indices(row, offset, col)
    out[0], out[1] = rows, cols


def complex_(real, imag, out):
    out.real = real
    out.imag = imag


KERNELS: dict[str, Callable[..., Any]] = {
    "diagonal": diagonal, "stack": stack,
    "cat": cat, "flip": flip, "roll": roll, "repeat": repeat, "diag_embed": diag_embed, "tril": tril,
    "triu": triu, "range": range_, "tril_indices": tril_indices, "triu_indices": triu_indices, "complex": complex_,
}

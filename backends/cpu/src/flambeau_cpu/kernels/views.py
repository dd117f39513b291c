"""numpy kernels for view ops: each returns a view of its input, never a copy."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _storage
from ._signature_wrap import with_signature


def view(input, size):
    result = input.view()
    result.shape = tuple(size)  # raises rather than copying; the meta function has checked it fits
    return result


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return input.view()
    return np.swapaxes(input, dim0, dim1)


def permute(input, dims):
    return np.transpose(input, tuple(dims))


def t(input):
    return input.T


def expand(input, size):
    offset = len(size) - input.ndim
    shape = tuple(input.shape[i - offset] if s == -1 else s for i, s in enumerate(size))
    # Stride 0 on the new and the size-1 dims, writeable (PyTorch lets a write through an expanded
    # view reach the one element behind it); broadcast_to would give a read-only view.
    item = input.itemsize
    strides = [0] * offset + [0 if n == 1 and s != 1 else st // item
                              for n, s, st in zip(input.shape, shape[offset:], input.strides)]
    try:
        return _storage.as_strided(input, shape, tuple(strides), _storage.storage_offset(input))
    except (RuntimeError, ValueError, TypeError):  # storage numpy cannot re-view: a read-only view
        return np.broadcast_to(input, shape)


def squeeze(input, dim):
    if dim is None:
        return np.squeeze(input)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if input.ndim == 0:
        return input.view()
    axes = tuple(d % input.ndim for d in dims if input.shape[d] == 1)
    return np.squeeze(input, axis=axes) if axes else input.view()


def unsqueeze(input, dim):
    # PyTorch's stride for the new dim: size*stride of the dim it lands before (1 at the end).
    # numpy's expand_dims recomputes the strides of every size-1 dim, so build the view directly.
    d = dim % (input.ndim + 1)
    item = input.itemsize
    strides = [s // item for s in input.strides]
    new_stride = input.shape[d] * strides[d] if d < input.ndim else 1
    try:
        return _storage.as_strided(input, input.shape[:d] + (1,) + input.shape[d:],
                                   tuple(strides[:d]) + (new_stride,) + tuple(strides[d:]),
                                   _storage.storage_offset(input))
    except (RuntimeError, ValueError, TypeError):  # storage numpy cannot re-view: strides are cosmetic here
        return np.expand_dims(input, d)


def narrow(input, dim, start, length):
    d = dim % input.ndim
    start = start % input.shape[d] if start < 0 else start
    index = (slice(None),) * d + (slice(start, start + length),)
    return input[index]


def select(input, dim, index):
    d = dim % input.ndim
    return input[(slice(None),) * d + (index, Ellipsis)]


def unfold(input, dimension, size, step):
    item = input.itemsize
    offset = _storage.storage_offset(input)
    if input.ndim == 0:
        return _storage.as_strided(input, (size,), (1,), offset)
    d = dimension % input.ndim
    shape = list(input.shape)
    strides = [s // item for s in input.strides]
    count = (shape[d] - size) // step + 1
    inner = strides[d]
    # One window only: its step is never taken, and a huge one would overflow numpy's byte strides.
    shape[d], strides[d] = count, strides[d] * (step if count > 1 else min(step, max(shape[d], 1)))
    return _storage.as_strided(input, tuple(shape) + (size,), tuple(strides) + (inner,), offset)


def as_strided(input, size, stride, storage_offset):
    return _storage.as_strided(input, size, stride, storage_offset)


def basic_index(input, index):
    # The trailing Ellipsis keeps numpy from returning a scalar when every dim gets an int.
    if None not in index:
        return input[tuple(index) + (Ellipsis,)]
    # numpy gives a None dim stride 0; PyTorch applies the entries left to right and gives a new dim
    # the size*stride of the dim now after it (numpy's expand_dims does the same). So do that.
    result, dim = input, 0
    for i in index:
        if i is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif isinstance(i, slice):
            result = result[(slice(None),) * dim + (i,)]
            dim += 1
        else:
            result = result[(slice(None),) * dim + (i, Ellipsis)]
    return result


def view_as_real(input):
    # a trailing dim of size 1 is contiguous whatever its stride, so numpy re-reads it as two reals
    # and keeps every other byte stride (PyTorch's strides doubled, in elements)
    return input[..., None].view(input.real.dtype)


def view_as_complex(input):
    # the meta function checked the last dim: size 2, stride 1 (numpy needs only that)
    return input.view(np.result_type(input.dtype, np.complex64))[..., 0]


_LIMITS_BODY = """\
    try:
        return _kernel({args})
    except ValueError as _limit_error:
        raise _view_limit_error(_limit_error) from None
"""


def _view_limit_error(exc: ValueError) -> Exception:
    """numpy's limits, which PyTorch's views do not have, said in flambeau's words (a view of
    2**62 elements is fine in PyTorch: numpy refuses any array whose bytes overflow an int64)."""
    text = str(exc)
    if "maximum supported dimension" in text:
        found = text.rsplit(" ", 1)[-1]  # numpy's "... is currently 64, found 70"
        return RuntimeError(f"flambeau's CPU backend supports at most 64 dimensions (numpy's limit), got {found}")
    if "too big" in text:
        return RuntimeError("flambeau's CPU backend cannot make a view whose elements span more than 2**63 bytes "
                            "(numpy's limit; PyTorch allows it)")
    return exc


def _with_limits(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` with numpy's size and dimension limits raised as flambeau errors."""
    return with_signature(kernel, _LIMITS_BODY, {"_view_limit_error": _view_limit_error})


KERNELS: dict[str, Callable[..., Any]] = {
    "view_as_real": view_as_real, "view_as_complex": view_as_complex,
    "view": _with_limits(view), "transpose": transpose, "permute": permute, "t": t, "expand": _with_limits(expand),
    "squeeze": squeeze, "unsqueeze": _with_limits(unsqueeze), "narrow": narrow, "select": select,
    "unfold": _with_limits(unfold), "as_strided": _with_limits(as_strided), "basic_index": basic_index,
}

"""numpy kernels for view ops: each returns a view of its input, never a copy.

An empty input first gets PyTorch's strides (``_storage.with_empty_strides``: numpy gives fresh empty
arrays all-zero strides), so that a view of an empty tensor has the strides PyTorch's has."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _storage
from ._signature_wrap import with_signature


def view(input, size):
    if not input.size:
        # PyTorch: an empty tensor viewed as another shape gets row-major strides (the same shape: its own)
        input = _storage.with_empty_strides(input)
        if tuple(size) != input.shape:
            shape = _infer_empty(size)
            return _storage.as_strided(input, shape, _storage.contiguous_element_strides(shape), None)
    result = input.view()
    result.shape = tuple(size)  # raises rather than copying; the meta function has checked it fits
    return result


def _infer_empty(size) -> tuple:
    """``size`` for an empty tensor: a -1 stands for 0 (the meta function allowed it only so)."""
    return tuple(0 if s == -1 else int(s) for s in size)


def transpose(input, dim0, dim1):
    if not input.size:
        input = _storage.with_empty_strides(input)
    if input.ndim == 0:
        return input.view()
    return np.swapaxes(input, dim0, dim1)


def permute(input, dims):
    if not input.size:
        input = _storage.with_empty_strides(input)
    return np.transpose(input, tuple(dims))


def t(input):
    if not input.size:
        input = _storage.with_empty_strides(input)
    return input.T


def expand(input, size):
    if not input.size:
        input = _storage.with_empty_strides(input)
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
    if not input.size:
        input = _storage.with_empty_strides(input)
    if dim is None:
        return np.squeeze(input)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if input.ndim == 0:
        return input.view()
    axes = tuple(d % input.ndim for d in dims if input.shape[d] == 1)
    return np.squeeze(input, axis=axes) if axes else input.view()


def unsqueeze(input, dim):
    if not input.size:
        input = _storage.with_empty_strides(input)
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
    if not input.size:
        input = _storage.with_empty_strides(input)
    d = dim % input.ndim
    start = start % input.shape[d] if start < 0 else start
    index = (slice(None),) * d + (slice(start, start + length),)
    return input[index]


def select(input, dim, index):
    if not input.size:
        input = _storage.with_empty_strides(input)
    d = dim % input.ndim
    return input[(slice(None),) * d + (index, Ellipsis)]


def unfold(input, dimension, size, step):
    if not input.size:
        input = _storage.with_empty_strides(input)
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


def _empty_basic_index(input, index):
    """``basic_index`` of an empty array by PyTorch's arithmetic: numpy leaves a stride unscaled when
    a step slices a dim down to no element, where PyTorch multiplies it by the step."""
    item = input.itemsize
    shape, strides = input.shape, [s // item for s in input.strides]
    offset = _storage.storage_offset(input)
    out_shape, out_strides, dim = [], [], 0
    for i in index:
        if i is None:  # a new dim: the size*stride of the dim now after it, 1 at the end (as unsqueeze)
            out_shape.append(1)
            out_strides.append(shape[dim] * strides[dim] if dim < len(shape) else 1)
        elif isinstance(i, slice):
            start, stop, step = i.indices(shape[dim])
            out_shape.append(len(range(start, stop, step)))
            out_strides.append(strides[dim] * step)
            offset += start * strides[dim]
            dim += 1
        else:  # an int: the meta function checked it against the dim's size
            offset += (i % shape[dim]) * strides[dim]
            dim += 1
    out_shape += shape[dim:]
    out_strides += strides[dim:]
    # PyTorch's offset may point past an empty storage, which numpy cannot express
    offset = min(offset, _storage.storage_numel(input))
    return _storage.as_strided(input, tuple(out_shape), tuple(out_strides), offset)


def basic_index(input, index):
    if not input.size:
        return _empty_basic_index(_storage.with_empty_strides(input), index)
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


def conj(input):
    # the conjugate bit lives on the Tensor: the storage is shared as it is
    return input.view()


KERNELS: dict[str, Callable[..., Any]] = {
    "_conj": conj,
    "view_as_real": view_as_real, "view_as_complex": view_as_complex,
    "view": _with_limits(view), "transpose": transpose, "permute": permute, "t": t, "expand": _with_limits(expand),
    "squeeze": squeeze, "unsqueeze": _with_limits(unsqueeze), "narrow": narrow, "select": select,
    "unfold": _with_limits(unfold), "as_strided": _with_limits(as_strided), "basic_index": basic_index,
}

"""Views and layout ops onto the core tier's views, ``copy`` and ``gather``."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.meta import wrap_dim
from . import decomposition
from ._util import op


@decomposition("t", "transpose view", cast=False)
def _t(x: Tensor) -> Tensor:
    if x._data.ndim == 2:
        return op("transpose")(x, 0, 1)
    return op("view")(x, tuple(x._data.shape))  # 0-d and 1-d: an alias


@decomposition("narrow", "basic_index", cast=False)
def _narrow(x: Tensor, dim: Any, start: Any, length: Any) -> Tensor:
    dim = wrap_dim(dim, x._data.ndim)
    start = int(start)
    if start < 0:
        start += x._data.shape[dim]
    return op("basic_index")(x, (slice(None),) * dim + (slice(start, start + int(length)),))


@decomposition("real", "view_as_real select", cast=False)
def _real(x: Tensor) -> Tensor:
    if not x._dtype.is_complex:
        return op("view")(x, tuple(x._data.shape))
    return op("view_as_real")(x).select(-1, 0)


@decomposition("imag", "view_as_real select", cast=False)
def _imag(x: Tensor) -> Tensor:
    return op("view_as_real")(x).select(-1, 1)


@decomposition("clone", "copy")
def _clone(x: Tensor, memory_format: Any = None) -> Tensor:
    """A copy laid out as the op's kernels lay it out: row-major unless ``memory_format`` says
    otherwise (``Tensor.clone`` keeps strides by asking for ``preserve_format``)."""
    from ..._layout import format_name
    from ..._creation import empty, empty_like

    name = "contiguous_format" if memory_format is None else format_name(memory_format, "clone")
    if name == "preserve_format":
        out = empty_like(x)
    elif name == "contiguous_format":
        out = empty(tuple(x._data.shape), dtype=x._dtype, device=x._device)
    else:
        out = empty(tuple(x._data.shape), dtype=x._dtype, device=x._device, memory_format=memory_format)
    return op("copy_")(out, x)


@decomposition("cat", "narrow copy")
def _cat(tensors: Any, dim: Any = 0) -> Tensor:
    from ..._creation import empty

    spec = _cat_spec(tensors, dim)
    shape, dt = spec
    parts = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]  # legacy empties
    d = wrap_dim(dim, len(shape))
    out = empty(shape, dtype=dt, device=parts[0]._device if parts else tensors[0]._device)
    offset = 0
    for t in parts:
        n = t._data.shape[d]
        op("narrow")(out, d, offset, n).copy_(t)
        offset += n
    return out


def _cat_spec(tensors: Any, dim: Any) -> tuple:
    from ...ops._registry import OPS

    return OPS["cat"].meta(tensors, dim)


def _index_along(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """``x.index_select(dim, index)`` for a 1-d int64 ``index`` of valid positions, through ``gather``."""
    shape = list(x._data.shape)
    shape[dim] = index._data.shape[0]
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return op("gather")(x, dim, index.reshape(view).expand(tuple(shape)))


@decomposition("flip", "arange gather reshape expand")
def _flip(x: Tensor, dims: Any) -> Tensor:
    from ...ops.meta import wrap_dims

    result = x
    for d in wrap_dims(dims, max(x._data.ndim, 1)) if x._data.ndim else ():
        n = x._data.shape[d]
        result = _index_along(result, d, op("arange")(n - 1, -1, -1, device=x._device))
    return result if result is not x else x.clone()


@decomposition("roll", "arange sub remainder gather reshape expand clone")
def _roll(x: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        flat = x.reshape(-1)
        return _roll(flat, shifts, 0).reshape(x._data.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    result = x
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, x._data.ndim)
        n = x._data.shape[d]
        if n == 0:
            continue
        index = op("remainder")(op("arange")(0, n, 1, device=x._device) - int(s), n)
        result = _index_along(result, d, index)
    return result if result is not x else x.clone()


@decomposition("repeat", "reshape expand clone")
def _repeat(x: Tensor, repeats: Any) -> Tensor:
    repeats = tuple(int(r) for r in repeats)
    shape = (1,) * (len(repeats) - x._data.ndim) + tuple(x._data.shape)
    interleaved: list[int] = []
    expanded: list[int] = []
    for r, s in zip(repeats, shape):
        interleaved += [1, s]
        expanded += [r, s]
    final = tuple(r * s for r, s in zip(repeats, shape))
    return x.reshape(tuple(interleaved)).expand(tuple(expanded)).reshape(final).clone()


def _triangle(name: str, x: Tensor, diagonal: int, lower: bool) -> Tensor:
    rows, cols = x._data.shape[-2:]
    r = op("arange")(0, rows, 1, device=x._device).unsqueeze(1)
    c = op("arange")(0, cols, 1, device=x._device).unsqueeze(0)
    keep = (c - r) <= diagonal if lower else (c - r) >= diagonal
    from ._util import scalar_like

    return op("where")(keep, x, scalar_like(0, x))


@decomposition("tril", "arange unsqueeze sub le where")
def _tril(x: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("tril", x, diagonal, True)


@decomposition("triu", "arange unsqueeze sub ge where")
def _triu(x: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("triu", x, diagonal, False)


@decomposition("diag_embed", "diagonal copy")
def _diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    from ..._creation import zeros
    from ...ops._registry import OPS

    shape, dt = OPS["diag_embed"].meta(x, offset, dim1, dim2)
    out = zeros(shape, dtype=dt, device=x._device)
    op("diagonal")(out, offset, dim1, dim2).copy_(x)
    return out

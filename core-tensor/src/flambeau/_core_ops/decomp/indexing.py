"""Index ops onto the core tier's ``gather``, ``scatter``, ``scatter_add``, ``where`` and ``nonzero``."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.meta import wrap_dim
from . import decomposition
from ._util import as_dtype, op, result_dtype


def _along(index: Tensor, dim: int, shape: tuple[int, ...]) -> Tensor:
    """A 1-d (or 0-d) ``index`` laid along ``dim`` and expanded to ``shape``."""
    view = [1] * len(shape)
    view[dim] = -1
    return index.reshape(view).expand(shape)


def _wrapped(index: Tensor, size: int) -> Tensor:
    return op("where")(index < 0, index + size, index)


def _first_outside(index: Tensor, low: int, high: int) -> int | None:
    """The first entry of ``index`` outside ``[low, high)``, or None: a data-dependent check, made on
    the device with core ops, before any index reaches ``gather`` or ``scatter``."""
    if index.numel() == 0:
        return None
    bad = (index < low) | (index >= high)
    if not bool(op("sum")(bad).item()):
        return None
    return int(op("masked_select")(index, bad).reshape(-1)[0].item())


@decomposition("index_select", "reshape expand gather lt ge bitwise_or sum masked_select")
def _index_select(x: Tensor, dim: Any, index: Tensor) -> Tensor:
    size = x._data.shape[wrap_dim(dim, x._data.ndim)] if x._data.ndim else 1
    if _first_outside(index, 0, size) is not None:
        raise IndexError("index out of range in self")
    if x._data.ndim == 0:  # a 0-d input (its index has one element) gives a 0-d result
        return op("gather")(x.reshape(1), 0, index.reshape(-1)).reshape(())
    dim = wrap_dim(dim, x._data.ndim)
    index = index.reshape(-1)
    shape = list(x._data.shape)
    shape[dim] = index._data.shape[0]
    return op("gather")(x, dim, _along(index, dim, tuple(shape)))


@decomposition("take", "reshape lt add where gather ge bitwise_or sum masked_select")
def _take(x: Tensor, index: Tensor) -> Tensor:
    flat = x.reshape(-1)
    n = flat._data.shape[0]
    bad = _first_outside(index, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    picked = op("gather")(flat, 0, _wrapped(index.reshape(-1), n))
    return picked.reshape(index._data.shape)


@decomposition("take_along_dim", "reshape expand gather")
def _take_along_dim(x: Tensor, indices: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        return op("gather")(x.reshape(-1), 0, indices.reshape(-1))
    from ...ops.meta import broadcast_shapes

    dim = wrap_dim(dim, x._data.ndim)
    xs, js = list(x._data.shape), list(indices._data.shape)
    xs[dim], js[dim] = 1, 1
    common = list(broadcast_shapes(xs, js))
    xshape, ishape = list(common), list(common)
    xshape[dim], ishape[dim] = x._data.shape[dim], indices._data.shape[dim]
    return op("gather")(x.expand(tuple(xshape)), dim, indices.expand(tuple(ishape)))


@decomposition("masked_fill", "where to_dtype")
def _masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        value = as_dtype(value, x._dtype)
    return op("where")(mask, value, x)


def _dim_mask(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """A bool mask over ``x``'s shape, True along ``dim`` at the positions ``index`` names."""
    from ..._creation import zeros

    size = x._data.shape[dim] if x._data.ndim else 1
    hit = zeros((size,), dtype=_bool(), device=x._device)
    hit = op("scatter")(hit, 0, _wrapped(index.reshape(-1), size), None, value=True)
    if x._data.ndim == 0:
        return hit.reshape(())
    return _along(hit, dim, tuple(x._data.shape))


def _bool() -> Any:
    from ... import _dtypes

    return _dtypes.bool


@decomposition("index_fill", "scatter lt ge bitwise_or sum masked_select add where reshape expand to_dtype")
def _index_fill(x: Tensor, dim: Any, index: Tensor, value: Any) -> Tensor:
    dim = wrap_dim(dim, x._data.ndim) if x._data.ndim else 0
    size = x._data.shape[dim] if x._data.ndim else 1
    bad = _first_outside(index, -size, size)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    if isinstance(value, Tensor):
        value = as_dtype(value, x._dtype)
    return op("where")(_dim_mask(x, dim, index), value, x)


@decomposition("index_add", "mul scatter_add reshape expand clone to_dtype")
def _index_add(x: Tensor, dim: Any, index: Tensor, source: Tensor, alpha: Any = 1) -> Tensor:
    if x._data.ndim == 0:
        return x + source.reshape(()) * alpha * index.numel()
    dim = wrap_dim(dim, x._data.ndim)
    source = source if alpha == 1 else source * alpha
    source = as_dtype(source, x._dtype)
    if source._data.ndim == 0:
        source = source.reshape(1)
    return op("scatter_add")(x, dim, _along(index.reshape(-1), dim, tuple(source._data.shape)), source)


@decomposition("index_copy", "scatter lt ge bitwise_or sum masked_select reshape expand to_dtype")
def _index_copy(x: Tensor, dim: Any, index: Tensor, source: Tensor) -> Tensor:
    d = wrap_dim(dim, x._data.ndim) if x._data.ndim else 0
    size = x._data.shape[d] if x._data.ndim else 1
    bad = _first_outside(index, 0, size)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}")
    if x._data.ndim == 0:
        return as_dtype(source.reshape(()), x._dtype).clone()
    dim = wrap_dim(dim, x._data.ndim)
    if source._data.ndim == 0:
        source = source.reshape(1)
    return op("scatter")(x, dim, _along(index.reshape(-1), dim, tuple(source._data.shape)), source)


@decomposition("masked_select", "expand nonzero select gather reshape", cast=False)
def _masked_select(x: Tensor, mask: Tensor) -> Tensor:
    from ...ops.meta import broadcast_shapes

    shape = broadcast_shapes(x._data.shape, mask._data.shape)
    flat_mask = mask.expand(shape).reshape(-1)
    positions = op("nonzero")(flat_mask).select(1, 0) if flat_mask.numel() else flat_mask.long()
    return op("gather")(x.expand(shape).reshape(-1), 0, positions)


@decomposition("argwhere", "nonzero", cast=False)
def _argwhere(x: Tensor) -> Tensor:
    return op("nonzero")(x)


@decomposition("masked_scatter", "expand nonzero select cumsum sub gather where reshape to_dtype")
def _masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    from ...ops.meta import broadcast_shapes

    shape = broadcast_shapes(x._data.shape, mask._data.shape)
    m = mask.expand(shape).reshape(-1)
    # the k-th True position takes source's k-th element: k is the running count of Trues, minus one
    k = op("cumsum")(m, 0) - 1
    k = op("where")(m, k, 0)
    flat_source = source.reshape(-1)
    if int(op("sum")(m).item()) > flat_source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if flat_source.numel() == 0:
        return x.expand(shape).clone()
    taken = op("gather")(flat_source, 0, k)
    return op("where")(m, taken, x.expand(shape).reshape(-1)).reshape(shape)


del result_dtype

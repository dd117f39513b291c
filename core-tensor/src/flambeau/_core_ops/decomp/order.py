"""Order statistics along a dim, picked from a stable ``sort``: ``kthvalue``, ``median_dim`` and
``nanmedian_dim``.

A stable ascending sort puts NaN last and keeps equal elements in their order, so the element of
rank ``r`` and its index are position ``r`` of the sorted row, which is the element PyTorch's
kernels report: ``kthvalue`` rank ``k - 1``; ``median`` rank ``(n - 1) // 2``, or the first NaN
(rank: the row's count of numbers) where the row has one; ``nanmedian`` rank
``(numbers - 1) // 2`` (0 for an all-NaN row, whose first NaN is the answer). The values are
gathered from the input at the indices found, so gradients reach exactly those elements.
"""
from __future__ import annotations

from typing import Any, Callable

from ..._tensor import Tensor
from . import decomposition
from ._util import op


def _pick(x: Tensor, dim: int, keepdim: bool, rank: Callable[[Tensor, Tensor, int], Any]) -> tuple[Tensor, Tensor]:
    """(values, indices) of the element of rank ``rank(x, sorted_indices, dim)`` along ``dim``; the
    rank is an int, or an int64 tensor of ``x``'s shape reduced along ``dim`` with keepdim."""
    from ... import _dtypes
    from ..._grad_mode import no_grad
    from ...ops.meta import wrap_dim

    if x._data.ndim == 0:
        zero = op("mul")(op("to_dtype")(op("ne")(x, x), _dtypes.int64), 0)
        return x.clone(), zero
    dim = wrap_dim(dim, x._data.ndim)
    with no_grad():
        order = op("sort")(x.detach(), dim, False, stable=True).indices
        r = rank(x.detach(), order, dim)
        if not isinstance(r, Tensor):
            r = op("narrow")(order, dim, 0, 1) * 0 + r
        indices = op("gather")(order, dim, r)
    values = op("gather")(x, dim, indices)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def _numbers(x: Tensor, dim: int) -> Tensor:
    """Per row, how many elements are not NaN (int64, dim kept)."""
    return op("sum")(op("eq")(x, x), (dim,), True)


@decomposition("kthvalue", "sort narrow mul add gather squeeze to_dtype ne")
def _kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _pick(x, dim, keepdim, lambda _x, _order, _d: k - 1)


@decomposition("median_dim", "sort eq sum lt where narrow mul add gather squeeze to_dtype ne")
def _median_dim(x: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    def rank(x: Tensor, order: Tensor, d: int) -> Any:
        n = x._data.shape[d]
        if not x._dtype.is_floating_point:
            return (n - 1) // 2
        numbers = _numbers(x, d)
        return op("where")(op("lt")(numbers, n), numbers, (n - 1) // 2)  # a row with NaN: its first NaN
    return _pick(x, dim, keepdim, rank)


@decomposition("nanmedian_dim", "sort eq sum sub div lt where narrow mul add gather squeeze to_dtype ne")
def _nanmedian_dim(x: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    def rank(x: Tensor, order: Tensor, d: int) -> Any:
        n = x._data.shape[d]
        if not x._dtype.is_floating_point:
            return (n - 1) // 2
        numbers = _numbers(x, d) - 1
        numbers = op("where")(op("lt")(numbers, 0), 0, numbers)
        return op("div")(numbers, 2, rounding_mode="floor")
    return _pick(x, dim, keepdim, rank)

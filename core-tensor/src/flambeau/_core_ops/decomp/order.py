"""Order statistics along a dim, picked from a stable ``sort``: ``kthvalue``, ``median_dim``,
``nanmedian_dim``, ``quantile``, ``nanquantile`` and ``mode``.

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
from ._util import op, scalar_like


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


def _quantile(x: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    """PyTorch's quantile algorithm: rank ``q * (count - 1)`` in each row sorted with NaN last
    (``count`` the row's numbers for nanquantile, else its length, and a row with NaN takes its
    last element, a NaN), rounded as ``interpolation`` says, then the two neighbouring values
    gathered and blended with ``lerp``."""
    from ... import _dtypes
    from ...ops.meta import wrap_dim

    ndim = x._data.ndim
    if dim is None or ndim == 0:
        rows, keep_at = x.reshape(-1), None
    else:
        d = wrap_dim(dim, ndim)
        rows, keep_at = x.permute(tuple(i for i in range(ndim) if i != d) + (d,)), d
    with_q_dim = isinstance(q, Tensor) and q._data.ndim == 1
    qs = q.reshape(-1) if isinstance(q, Tensor) else scalar_like(float(q), x).reshape(1)
    order = op("sort")(rows.detach(), -1, False, stable=True).indices
    ordered = op("gather")(rows, -1, order)  # gradients reach the input through the gather
    n = rows._data.shape[-1]
    numbers = op("to_dtype")(op("sum")(op("eq")(ordered.detach(), ordered.detach()), (-1,), True), x._dtype)
    if ignore_nan:
        ranks = qs * (numbers - 1)
        ranks = op("where")(op("lt")(ranks, 0), 0.0, ranks)
    else:
        ranks = op("where")(op("lt")(numbers, n), float(n - 1), qs * (n - 1))
    if interpolation == "lower":
        ranks = op("floor")(ranks)
    elif interpolation == "higher":
        ranks = -op("floor")(-ranks)
    elif interpolation == "nearest":
        ranks = op("round")(ranks)
    below = op("to_dtype")(ranks, _dtypes.int64)
    result = op("gather")(ordered, -1, below)
    if interpolation in ("linear", "midpoint"):
        above = op("to_dtype")(-op("floor")(-ranks), _dtypes.int64)
        weight = ranks - op("floor")(ranks) if interpolation == "linear" else 0.5
        result = op("lerp")(result, op("gather")(ordered, -1, above), weight)
    result = result.permute((result._data.ndim - 1,) + tuple(range(result._data.ndim - 1)))  # q's dim first
    if keepdim:
        if keep_at is None:
            result = result.reshape((result._data.shape[0],) + (1,) * ndim)
        else:
            result = result.unsqueeze(keep_at + 1)
    return result if with_q_dim else result.squeeze(0)


_QUANTILE_USES = ("reshape permute sort gather eq sum to_dtype mul sub lt where floor neg round lerp unsqueeze "
                  "squeeze fill")


@decomposition("quantile", _QUANTILE_USES)
def _quantile_decomposition(x: Tensor, q: Any, dim: Any = None, keepdim: bool = False,
                            interpolation: str = "linear") -> Tensor:
    return _quantile(x, q, dim, keepdim, interpolation, ignore_nan=False)


@decomposition("nanquantile", _QUANTILE_USES)
def _nanquantile_decomposition(x: Tensor, q: Any, dim: Any = None, keepdim: bool = False,
                               interpolation: str = "linear") -> Tensor:
    return _quantile(x, q, dim, keepdim, interpolation, ignore_nan=True)


@decomposition("mode", "permute sort gather narrow ne cat to_dtype cumsum sub mul add scatter_add argmax unsqueeze "
                       "squeeze ne")
def _mode(x: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value of each row, the smallest of equally frequent ones, and its last index.

    In the row sorted stably, equal values form runs in ascending order; the run lengths, summed
    into the runs' numbers with ``scatter_add``, pick the first longest run (``argmax`` returns the
    first maximum), and that run's last sorted position holds the value's last index in the row.
    """
    from ... import _dtypes
    from ...ops.meta import wrap_dim

    ndim = x._data.ndim
    if ndim == 0:
        return x.clone(), op("mul")(op("to_dtype")(op("ne")(x, x), _dtypes.int64), 0)
    d = wrap_dim(dim, ndim)
    rows = x.permute(tuple(i for i in range(ndim) if i != d) + (d,))
    n = rows._data.shape[-1]
    order = op("sort")(rows.detach(), -1, False, stable=True).indices
    ordered = op("gather")(rows.detach(), -1, order)
    starts = op("ne")(op("narrow")(ordered, -1, 1, n - 1), op("narrow")(ordered, -1, 0, n - 1))
    first = op("ne")(op("narrow")(ordered, -1, 0, 1), op("narrow")(ordered, -1, 0, 1)) | True  # all True
    run = op("cumsum")(op("to_dtype")(op("cat")([first, starts], -1), _dtypes.int64), -1) - 1
    lengths = op("scatter_add")(run * 0, -1, run, run * 0 + 1)
    best = op("argmax")(lengths, -1, True)
    last = op("gather")(op("cumsum")(lengths, -1) - 1, -1, best)
    indices = op("gather")(order, -1, last)
    values = op("gather")(rows, -1, indices)
    if keepdim:
        return values.squeeze(-1).unsqueeze(d), indices.squeeze(-1).unsqueeze(d)
    return values.squeeze(-1), indices.squeeze(-1)

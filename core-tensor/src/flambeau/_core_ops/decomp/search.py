"""``searchsorted`` and ``bucketize`` onto the core tier: a bisection run for every value at once.

Each value keeps a half-open window ``[lo, hi)`` of its row, first the whole row; a round gathers
the row's element at ``mid = (lo + hi) // 2`` for every value and moves ``lo`` past it where
PyTorch's search does (``!(row[mid] >= v)`` on the left side, ``!(row[mid] > v)`` on the right:
a NaN value moves right every time and ends at the row's length), else ``hi`` down to it.
``ceil(log2(n + 1))`` rounds close every window, a gather, a comparison and two selects each,
so the cost is ``O(values * log n)`` as the kernel's.
"""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import op, scalar_like


def _bisect(row: Tensor, values: Any, right: bool) -> Tensor:
    """Per value, its insertion point in ``row``'s innermost dim (rows batched over the leading dims
    of ``values`` when ``row`` has more than one dim)."""
    if not isinstance(values, Tensor):
        values = scalar_like(values, row)
    n = row._data.shape[-1]
    if row._data.ndim == 1:  # one row for every value: gather from it through a flat view
        shape = values._data.shape
        flat = values.reshape(-1)
        rows = row.unsqueeze(0).expand((flat._data.shape[0], n))
        found = _bisect_rows(rows, flat.unsqueeze(1), n, right)
        return found.reshape(shape)
    return _bisect_rows(row, values, n, right)


def _bisect_rows(rows: Tensor, values: Tensor, n: int, right: bool) -> Tensor:
    """Bisection of each row of ``rows`` (..., n) for the values of the same leading index (..., m)."""
    from ... import _dtypes
    from ..._creation import full

    lo = full(tuple(values._data.shape), 0, dtype=_dtypes.int64, device=values._device)
    hi = lo + n
    if n == 0 or values.numel() == 0:
        return lo
    rounds = n.bit_length()  # windows of n + 1 places halve each round
    for _ in range(rounds):
        mid = op("div")(lo + hi, 2, rounding_mode="floor")
        probe = op("gather")(rows, -1, op("where")(op("lt")(mid, n), mid, n - 1))
        stays = op("gt" if right else "ge")(probe, values)
        open_ = op("lt")(lo, hi)
        lo = op("where")(open_ & op("bitwise_not")(stays), mid + 1, lo)
        hi = op("where")(open_ & stays, mid, hi)
    return lo


@decomposition("searchsorted", "reshape unsqueeze expand fill add div gather where lt ge gt bitwise_not bitwise_and")
def _searchsorted(sorted_sequence: Tensor, input: Any, out_int32: bool = False, right: bool = False,
                  side: Any = None, sorter: Any = None) -> Tensor:
    if sorter is not None:
        sorted_sequence = op("gather")(sorted_sequence, -1, sorter)
    return _bisect(sorted_sequence, input, bool(right) or side == "right")


@decomposition("bucketize", "reshape unsqueeze expand fill add div gather where lt ge gt bitwise_not bitwise_and")
def _bucketize(input: Any, boundaries: Tensor, out_int32: bool = False, right: bool = False) -> Tensor:
    return _bisect(boundaries, input, bool(right))

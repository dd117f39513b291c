"""``tensor[index]`` and ``tensor[index] = value`` for ints, slices, None and Ellipsis."""
from __future__ import annotations

from typing import Any

from ._tensor import Tensor
from .ops._registry import FUNCTIONS


def _as_int(item: Any) -> int | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, Tensor) and item._data.ndim == 0 and not item._dtype.is_floating_point \
            and item._dtype.name != "bool" and not item._dtype.is_complex:
        return int(item.item())
    if hasattr(item, "__index__") and not isinstance(item, Tensor):
        return item.__index__()
    return None


def normalize_basic_index(tensor: Tensor, index: Any) -> tuple | None:
    """The index as a tuple of ints (in range, non-negative), slices and None; None if not basic."""
    items = index if isinstance(index, tuple) else (index,)
    used = 0
    for item in items:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, slice) or _as_int(item) is not None:
            used += 1
        else:
            return None
    shape = tensor._data.shape
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out: list[Any] = []
    dim = 0
    for item in items:
        if item is Ellipsis:
            fill = len(shape) - used
            out.extend(slice(None) for _ in range(fill))
            dim += fill
        elif item is None:
            out.append(None)
        elif isinstance(item, slice):
            for part in (item.start, item.stop, item.step):
                if part is not None and _as_int(part) is None:
                    raise TypeError(f"slice indices must be integers or None, not {type(part).__name__}")
            if item.step is not None and _as_int(item.step) <= 0:
                raise ValueError("step must be greater than zero")
            out.append(slice(*(None if p is None else _as_int(p) for p in (item.start, item.stop, item.step))))
            dim += 1
        else:
            i = _as_int(item)
            size = shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            out.append(i % size)
            dim += 1
    return tuple(out)


def getitem(tensor: Tensor, index: Any) -> Tensor:
    basic = normalize_basic_index(tensor, index)
    if basic is None:
        return FUNCTIONS["index"](tensor, _advanced_index(index))
    return FUNCTIONS["basic_index"](tensor, basic)


def setitem(tensor: Tensor, index: Any, value: Any) -> None:
    basic = normalize_basic_index(tensor, index)
    if basic is None:
        FUNCTIONS["index_put_"](tensor, _advanced_index(index), _value_tensor(tensor, value))
        return
    target = FUNCTIONS["basic_index"](tensor, basic)
    target.copy_(value)


def _value_tensor(tensor: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    from ._creation import tensor as make_tensor

    return make_tensor(value, dtype=tensor._dtype, device=tensor._device)


def _advanced_index(index: Any) -> tuple:
    """An index with tensors and lists: lists become tensors; everything else is kept as it is."""
    from ._creation import tensor as make_tensor

    items = index if isinstance(index, tuple) else (index,)
    out = []
    for item in items:
        if isinstance(item, (list, bool)):
            item = make_tensor(item)
        elif item is not None and item is not Ellipsis and not isinstance(item, (slice, Tensor)) \
                and _as_int(item) is None:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
        out.append(item)
    return tuple(out)

"""``tensor[index]`` and ``tensor[index] = value``, with PyTorch's semantics.

An index is applied in two steps, as PyTorch does:

1. ints, slices, None and Ellipsis become one view (``basic_index``): ints select (the dim goes),
   slices narrow, None adds a dim of size 1. An index tensor keeps its dim (a full slice) and is
   recorded at the dim it will index in that view; a Python bool (or a 0-dim bool tensor) adds a
   dim of size 1 indexed by ``[0]`` (True) or ``[]`` (False).
2. if any tensor was recorded, the ``index`` op (reading) or ``index_put_`` (writing) applies them.

So ``x[0, :, idx]`` first selects ``x[0]`` and then indexes its dim 1: the result has shape
``(x.shape[1], len(idx))``, where numpy, which treats the 0 as one more array index, gives
``(len(idx), x.shape[1])``.
"""
from __future__ import annotations

from typing import Any

from . import _dtypes
from ._tensor import Tensor
from .ops._registry import FUNCTIONS
from .ops.meta import checked_scalar, expanded_shape

_VALID_INDEX = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices"
_MASK_DTYPES = (_dtypes.bool, _dtypes.uint8)


def _as_int(item: Any) -> int | None:
    """``item`` as a Python int if it acts as one in an index (not bool, not a tensor)."""
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if hasattr(item, "__index__") and not isinstance(item, (Tensor, list, tuple)) and not _is_array(item):
        try:
            return item.__index__()
        except TypeError:
            return None
    return None


def _is_array(item: Any) -> bool:
    return hasattr(item, "__array_interface__") and getattr(item, "ndim", 0) > 0


def _treat_sequence_as_tuple(index: Any) -> bool:
    """PyTorch's legacy rule: a list holding slices, None, Ellipsis, tensors or sequences is a tuple index."""
    if isinstance(index, tuple):
        return True
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(item is None or item is Ellipsis or isinstance(item, (slice, Tensor, list, tuple)) for item in index)


def _index_tensor_from_data(data: Any, like: Tensor) -> Tensor:
    """A list (or array) used as an index: bool stays a mask, anything else becomes int64."""
    from ._creation import tensor

    result = tensor(data, device=like._device)
    if result._dtype not in _MASK_DTYPES and result._dtype is not _dtypes.int64:
        result = result.to(_dtypes.int64)
    return result


def _slice_int(part: Any) -> int | None:
    if part is None:
        return None
    if isinstance(part, Tensor) and part._data.ndim == 0 and part._dtype._category == _dtypes._INT:
        return int(part.item())
    value = _as_int(part)
    if value is None:
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return value


def _classify(item: Any, like: Tensor) -> tuple[str, Any]:
    """One index entry as (kind, value): int, slice, none, ellipsis, bool (a Python/0-d bool), tensor."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, bool):
        return "bool", item
    value = _as_int(item)
    if value is not None:
        return "int", value
    if isinstance(item, Tensor):
        dt = item._dtype
        if item._data.ndim == 0 and dt._category == _dtypes._INT:
            return "int", int(item.item())
        if item._data.ndim == 0 and dt in _MASK_DTYPES:
            return "bool", bool(item.item())
        if dt._category > _dtypes._INT:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return "tensor", item
    if isinstance(item, (list, tuple)) or _is_array(item):
        return "tensor", _index_tensor_from_data(item, like)
    raise IndexError(f"{_VALID_INDEX} (got {type(item).__name__})")


def _dims_used(kind: str, value: Any) -> int:
    if kind in ("int", "slice"):
        return 1
    if kind == "tensor":
        return value._data.ndim if value._dtype in _MASK_DTYPES else 1
    return 0


def parse_index(tensor: Tensor, index: Any) -> tuple[tuple, list]:
    """Split ``index`` into a basic index for ``basic_index`` and the tensors for ``index``.

    Returns ``(basic, indices)``: ``basic`` holds in-range non-negative ints, slices and None, one
    entry per dim it touches; ``indices`` holds one entry per dim of the view ``basic`` gives
    (None or a tensor), empty when the index is basic.
    """
    items = index if _treat_sequence_as_tuple(index) else (index,)
    classified = [_classify(item, tensor) for item in items]
    shape = tensor._data.shape
    used = sum(_dims_used(k, v) for k, v in classified)
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    if sum(k == "ellipsis" for k, _ in classified) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    basic: list[Any] = []
    recorded: list[tuple[int, Tensor]] = []
    dim = 0  # the dim of ``tensor`` the next entry applies to
    view_dim = 0  # the dim of the basic view it becomes
    for kind, value in classified:
        if kind == "ellipsis":
            fill = len(shape) - used
            basic.extend(slice(None) for _ in range(fill))
            dim += fill
            view_dim += fill
        elif kind == "none":
            basic.append(None)
            view_dim += 1
        elif kind == "bool":
            from ._creation import tensor as make_tensor

            basic.append(None)
            recorded.append((view_dim, make_tensor([0] if value else [], dtype=_dtypes.int64,
                                                   device=tensor._device)))
            view_dim += 1
        elif kind == "slice":
            step = _slice_int(value.step)
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            basic.append(slice(_slice_int(value.start), _slice_int(value.stop), step))
            dim += 1
            view_dim += 1
        elif kind == "int":
            size = shape[dim]
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {size}")
            basic.append(value % size)
            dim += 1
        else:
            span = _dims_used(kind, value)
            recorded.append((view_dim, value))
            basic.extend(slice(None) for _ in range(span))
            dim += span
            view_dim += span
    # The index op takes one entry per dim, except that a k-dim mask is one entry covering k dims.
    indices: list[Any] = []
    covered = 0
    for at, idx in recorded:
        indices.extend([None] * (at - covered))
        indices.append(idx)
        covered = at + (idx._data.ndim if idx._dtype in _MASK_DTYPES else 1)
    return tuple(basic), indices


def _is_identity(basic: tuple, ndim: int) -> bool:
    return len(basic) <= ndim and all(isinstance(b, slice) and b == slice(None) for b in basic)


def _basic_view(tensor: Tensor, basic: tuple) -> Tensor:
    if _is_identity(basic, tensor._data.ndim):
        return tensor
    return FUNCTIONS["basic_index"](tensor, basic)


def getitem(tensor: Tensor, index: Any) -> Tensor:
    """``tensor[index]``: a view for ints, slices, None and Ellipsis; a copy when tensors index it."""
    if type(index) is int:  # the commonest case, kept short
        size = tensor._data.shape[0] if tensor._data.ndim else None
        if size is None:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        return FUNCTIONS["basic_index"](tensor, (index % size,))
    basic, indices = parse_index(tensor, index)
    if not indices:
        return FUNCTIONS["basic_index"](tensor, basic)
    return FUNCTIONS["index"](_basic_view(tensor, basic), indices)


def setitem(tensor: Tensor, index: Any, value: Any) -> None:
    """``tensor[index] = value``: ``value`` (a number or a tensor) is cast and broadcast into place."""
    basic, indices = parse_index(tensor, index)
    target = _basic_view(tensor, basic) if indices else FUNCTIONS["basic_index"](tensor, basic)
    if not indices:
        if _is_number(value):
            FUNCTIONS["copy_"](target, value)
            return
        source = _value_tensor(target, value)
        if source._data.shape != target._data.shape:  # PyTorch expands the value: its messages
            expanded_shape(source._data.shape, target._data.shape, source.type())
        FUNCTIONS["copy_"](target, source)
        return
    FUNCTIONS["index_put_"](target, indices, _value_tensor(target, value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex))


def _value_tensor(target: Tensor, value: Any) -> Any:
    """The value to write: a number stays a number for copy_; a tensor loses leading 1-dims and is cast."""
    if isinstance(value, Tensor):
        shape = value._data.shape
        lead = 0
        while lead < len(shape) and shape[lead] == 1:
            lead += 1
        if lead:
            value = value.reshape(shape[lead:])
        if value._dtype is not target._dtype:
            value = value.to(target._dtype)
        if value._device is not target._device:
            value = value.to(target._device)
        return value
    from ._creation import tensor as make_tensor

    # PyTorch's checked conversion (its message; -1 is 255 for uint8), not tensor()'s
    return make_tensor(checked_scalar(value, target._dtype), dtype=target._dtype, device=target._device)

"""``flambeau.Size``: a tensor's shape, a tuple of ints as ``torch.Size``."""
from __future__ import annotations

import math
import operator
from typing import Any, Iterable


class Size(tuple):
    """The shape of a tensor: a tuple of ints, as ``torch.Size``.

    Example::

        >>> fb.zeros(2, 3).shape
        flambeau.Size([2, 3])
    """

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> "Size":
        items = tuple(sizes)
        if any(type(d) is not int for d in items):
            items = tuple(_as_size_item(d, i) for i, d in enumerate(items))
        return tuple.__new__(cls, items)

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"flambeau.Size([{', '.join(str(d) for d in self)}])"

    def __getitem__(self, item):
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, count):
        return Size(tuple.__mul__(self, count))

    __rmul__ = __mul__


def _as_size_item(value: Any, position: int) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"flambeau.Size() takes an iterable of 'int' (item {position} is "
                        f"'{type(value).__name__}')")
    return operator.index(value)


def make_size(shape: tuple) -> Size:
    """A Size from a shape already known to hold ints (the fast path for ``Tensor.shape``)."""
    return tuple.__new__(Size, shape)

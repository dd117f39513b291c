"""``flambeau.Size``: a tensor's shape, a tuple of ints as ``torch.Size``."""
from __future__ import annotations

import math


class Size(tuple):
    """The shape of a tensor: a tuple of non-negative ints."""

    __slots__ = ()

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

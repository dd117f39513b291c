"""Modules: ``Flatten`` and ``Unflatten``."""
from __future__ import annotations

import math
from typing import Any

from flambeau import Tensor

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flattens dimensions ``start_dim`` to ``end_dim`` into one (``Tensor.flatten``).

    Args:
        start_dim: first dimension to flatten (default 1: keeps the batch dimension).
        end_dim: last dimension to flatten (default -1).
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expands dimension ``dim`` into ``unflattened_size`` (``Tensor.unflatten``).

    Args:
        dim: the dimension to expand (an int).
        unflattened_size: the new shape of that dimension (a tuple or list of ints, one may be -1).
    """

    def __init__(self, dim: int | str, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        elif isinstance(dim, str):
            raise TypeError("named tensors are not supported: Unflatten's dim must be an int")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(size: Any) -> None:
        if isinstance(size, (tuple, list)):
            for idx, elem in enumerate(size):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                                    f"{type(elem).__name__} at pos {idx}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(size).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        sizes = tuple(self.unflattened_size)
        dim = self.dim if self.dim >= 0 else self.dim + input.ndim
        if not 0 <= dim < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                             f"{input.ndim - 1}], but got {self.dim})")
        known = math.prod(s for s in sizes if s != -1)
        if -1 not in sizes and known != input.shape[dim]:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                               f"{self.dim} ({input.shape[dim]}) in the input tensor")
        return input.reshape(tuple(input.shape[:dim]) + sizes + tuple(input.shape[dim + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

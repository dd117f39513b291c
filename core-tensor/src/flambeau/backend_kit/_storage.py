"""What the kit's kernels need to know about a backend's memory: the :class:`ArrayStorage` protocol."""
from __future__ import annotations

from typing import Any, Protocol


class ArrayStorage(Protocol):
    """How a backend's native arrays sit in its memory, in PyTorch's model: every native is a strided
    view (shape, element strides, element offset) of one flat allocation, its storage.

    This is the part of a backend the kit cannot write for it: numpy builds views with
    ``np.ndarray(buffer=...)``, CuPy with ``cupy.ndarray(memptr=...)``, another library its own way.
    A module of functions with these names satisfies the protocol as well as an object does.
    """

    def allocate(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A new C-contiguous native of ``shape`` and (numpy) ``dtype`` over a fresh storage of exactly its size."""
        ...

    def offset_of(self, a: Any) -> int:
        """The element offset of ``a``'s first element from its storage's start."""
        ...

    def strides_of(self, a: Any) -> tuple[int, ...]:
        """``a``'s strides in elements."""
        ...

    def strided(self, a: Any, shape: tuple[int, ...], strides: tuple[int, ...], offset: int,
                dtype: Any = None) -> Any:
        """The view of ``a``'s storage with element ``strides``, starting ``offset`` elements in; elements
        of ``dtype`` (default ``a``'s: ``view_as_real``/``view_as_complex`` reinterpret the same bytes).
        An empty view may start past the storage's end."""
        ...

    def shares_memory(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` may overlap (``copy`` then copies its source first); may be conservative."""
        ...

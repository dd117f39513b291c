"""The Python faces of the shape and creation ops whose PyTorch signatures are overloaded.

Varargs forms (``x.repeat(2, 3)``, ``fb.meshgrid(a, b)``, ``fb.atleast_2d(a, b)``), aliases
(``concat``, ``moveaxis``, ``row_stack``), the deprecated ``range`` with its warning, and
``broadcast_shapes``, which needs no op of its own. ``empty_strided``, ``clone`` and the memory
formats are installed from here too; they live lower down (``_creation``, ``_layout``), where the
Tensor and the op declarations reach them.
"""
from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any, Sequence

from ._creation import clone, empty_strided
# The memory formats live with the other layout arithmetic; `flambeau.channels_last` & co. are installed from here.
from ._layout import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ._methods import _sizes
from ._tensor import Tensor
from .ops._registry import FUNCTIONS
from .ops.meta import broadcast_shapes as _broadcast_shapes


def _varargs(args: tuple) -> tuple:
    """``f(a, b)`` and ``f((a, b))`` / ``f([a, b])`` both give ``(a, b)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return args


_RANGE_WARNING = ("flambeau.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use flambeau.arange, which produces values in "
                  "[start, end).")


def range_(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    """Deprecated: values from ``start`` to ``end`` *inclusive*, ``step`` apart, in the default float dtype.

    Use :func:`flambeau.arange` (``end`` excluded) instead; this warns, as PyTorch's does.

    Args:
        start: the first value (default 0).
        end: the last value (included when the steps land on it).
        step: the gap between values.

    Example::

        >>> fb.range(1, 4)
        tensor([1., 2., 3., 4.])
    """
    warnings.warn(_RANGE_WARNING, UserWarning, stacklevel=2)
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    return FUNCTIONS["range"](start, end, step, dtype=dtype, device=device, requires_grad=requires_grad, out=out)


range_.__name__ = range_.__qualname__ = "range"


def concat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`flambeau.cat`."""
    return FUNCTIONS["cat"](tensors, dim, out=out)


def row_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`flambeau.vstack`."""
    return FUNCTIONS["vstack"](tensors, out=out)


def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Alias of :func:`flambeau.movedim`."""
    return FUNCTIONS["movedim"](input, source, destination)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors (views of them, expanded).

    Args:
        tensors: 0-D or 1-D tensors of one dtype and device (or one list of them).
        indexing: ``'ij'`` (the grids have shape ``(len(t0), len(t1), ...)``) or ``'xy'`` (the
            first two dims swapped). Omitting it means ``'ij'``, with PyTorch's warning.

    Example::

        >>> x, y = fb.meshgrid(fb.arange(3), fb.arange(2), indexing="ij")
        >>> x.shape
        flambeau.Size([3, 2])
    """
    if indexing is None:  # warned here, so that the warning names the caller's line
        from ._core_ops.creation import _MESHGRID_WARNING

        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    return FUNCTIONS["meshgrid"](list(_varargs(tensors)), indexing=indexing)


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """Views of the tensors expanded to their common broadcast shape."""
    return FUNCTIONS["broadcast_tensors"](list(_varargs(tensors)))


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape that tensors of ``shapes`` broadcast to, as a ``flambeau.Size``.

    Example::

        >>> fb.broadcast_shapes((2, 1), (3,))
        flambeau.Size([2, 3])
    """
    from ._size import Size

    normal = []
    for s in shapes:
        if isinstance(s, int):
            s = (s,)
        for n in s:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(s)}")
        normal.append(tuple(int(n) for n in s))
    return Size(_broadcast_shapes(*normal) if normal else ())


def _atleast(ndim: int):
    op = FUNCTIONS[f"atleast_{ndim}d"]

    def fn(*tensors: Any) -> Any:
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return op(tensors[0])
        return tuple(op(t) for t in _varargs(tensors))
    fn.__name__ = fn.__qualname__ = f"atleast_{ndim}d"
    fn.__doc__ = f"A view of a tensor with at least {ndim} dims; a tuple for several tensors."
    return fn


# -- methods ------------------------------------------------------------------------------

def _repeat_method(self: Tensor, *sizes: Any) -> Tensor:
    return FUNCTIONS["repeat"](self, _sizes(sizes, "repeat", "repeats"))


def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    return FUNCTIONS["tile"](self, _sizes(dims, "tile", "dims"))


def _flip_method(self: Tensor, *dims: Any) -> Tensor:
    return FUNCTIONS["flip"](self, _sizes(dims, "flip", "dims"))


def _moveaxis_method(self: Tensor, source: Any, destination: Any) -> Tensor:
    return FUNCTIONS["movedim"](self, source, destination)


_FUNCTIONS = {
    "range": range_, "concat": concat, "concatenate": concat, "row_stack": row_stack, "moveaxis": moveaxis,
    "meshgrid": meshgrid, "broadcast_tensors": broadcast_tensors, "broadcast_shapes": broadcast_shapes,
    "atleast_1d": _atleast(1), "atleast_2d": _atleast(2), "atleast_3d": _atleast(3),
    "empty_strided": empty_strided, "clone": clone, "memory_format": memory_format,
    "contiguous_format": contiguous_format, "preserve_format": preserve_format, "channels_last": channels_last,
    "channels_last_3d": channels_last_3d,
}

_METHODS = {"clone": clone, "repeat": _repeat_method, "tile": _tile_method, "flip": _flip_method,
            "moveaxis": _moveaxis_method}


def install(namespace: ModuleType) -> None:
    """Put the functions on ``flambeau`` and the methods on ``Tensor``."""
    for name, fn in _FUNCTIONS.items():
        setattr(namespace, name, fn)
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)

"""The Python faces of the shape and creation ops whose PyTorch signatures are overloaded.

Varargs forms (``x.repeat(2, 3)``, ``fb.meshgrid(a, b)``, ``fb.atleast_2d(a, b)``), aliases
(``concat``, ``moveaxis``, ``row_stack``), the deprecated ``range`` with its warning, and
``empty_strided`` and ``broadcast_shapes``, which need no op of their own.
"""
from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any, Sequence

from . import _layout
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


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **_: Any) -> Tensor:
    """An uninitialised tensor with the given ``size`` and ``stride`` over storage just large enough.

    Example::

        >>> fb.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    from ._creation import empty

    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    storage = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    result = empty(storage, dtype=dtype, device=device).as_strided(size, stride, 0)
    result._base = None  # a fresh tensor, not a view of the scratch storage it was cut from
    if requires_grad:
        result.requires_grad_(True)
    return result


# -- memory formats and clone ------------------------------------------------------------

class memory_format:
    """How a tensor's elements are laid out in memory (``flambeau.contiguous_format``, ...)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"flambeau.{self._name}"

    def __reduce__(self) -> str:
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def format_name(fmt: Any, fn: str, default: str = "preserve_format") -> str:
    """The name of a ``memory_format`` argument (``default`` for None), or the TypeError PyTorch gives."""
    if fmt is None:
        return default
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be flambeau.memory_format, not {type(fmt).__name__}")
    return fmt._name


def like_strides(input: Tensor, fmt: Any, fn: str) -> tuple | None:
    """The strides of a new tensor shaped as ``input`` in the memory format ``fmt`` (None: row-major).

    ``preserve_format`` (the default) keeps a non-overlapping and dense input's strides and gives
    any other input the format its strides suggest, as PyTorch's ``empty_like``."""
    name = format_name(fmt, fn)
    shape = tuple(input._data.shape)
    strides = _layout.preserve_strides(shape, input.stride()) if name == "preserve_format" else \
        _layout.format_strides(shape, name)
    return None if strides == _layout.contiguous_strides(shape) else strides


def clone(input: Tensor, *, memory_format: memory_format | None = None) -> Tensor:
    """clone(input, *, memory_format=flambeau.preserve_format) -> Tensor

    A copy with its own storage.

    Args:
        input (Tensor): the tensor to copy.
        memory_format (flambeau.memory_format, optional): ``flambeau.preserve_format`` (the default:
            a non-overlapping and dense input keeps its strides, as a transposed one does; any other
            takes the format its strides suggest), ``flambeau.contiguous_format``,
            ``flambeau.channels_last`` (4-D) or ``flambeau.channels_last_3d`` (5-D).

    Example::

        >>> fb.ones(3, 4).t().clone().stride()
        (1, 4)
    """
    if input.__class__ is not Tensor and not isinstance(input, Tensor):
        return FUNCTIONS["clone"](input)  # the op's own type error
    if memory_format is None or memory_format is preserve_format:
        flags = getattr(input._data, "flags", None)  # numpy and CuPy arrays say it for free
        if flags is not None and flags.c_contiguous and input._data.size:  # (numpy: every empty array is)
            return FUNCTIONS["clone"](input)
    strides = like_strides(input, memory_format, "clone")
    if strides is None:
        return FUNCTIONS["clone"](input)
    result = empty_strided(tuple(input.shape), strides, dtype=input.dtype, device=input.device)
    return result.copy_(input)


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

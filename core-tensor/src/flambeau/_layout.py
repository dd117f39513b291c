"""Memory layouts as PyTorch computes them: which strides a result gets from its inputs' strides.

Strides here are in elements. Everything is plain arithmetic on shapes and strides, so that every
backend shares one answer:

- ``is_contiguous_as``: ``Tensor.is_contiguous(memory_format=...)``;
- ``non_overlapping_and_dense``: whether the elements fill their span exactly once;
- ``suggest_format``: the memory format strides look like (PyTorch's ``suggest_memory_format``);
- ``preserve_strides``: the strides of ``empty_like``/``clone``/``to`` under ``preserve_format``;
- ``elementwise_strides``: the strides of an elementwise op's output (PyTorch's TensorIterator:
  inputs that agree keep their layout, otherwise the dims are ordered by the inputs' strides);
- ``memory_format`` and its four values, ``format_name`` and ``like_strides``: the
  ``memory_format=`` arguments of the Tensor, the creation functions and the ops.
"""
from __future__ import annotations

from typing import Any, Sequence

Shape = Sequence[int]

#: channels_last orders NHWC, channels_last_3d NDHWC: the dims from fastest to slowest.
_CHANNELS_LAST_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def contiguous_strides(shape: Shape) -> tuple[int, ...]:
    """Row-major strides (a dim of size 0 counts as 1, as PyTorch's)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def strides_in_order(shape: Shape, order: Sequence[int]) -> tuple[int, ...]:
    """Dense strides laying the dims out in ``order`` (fastest first), sizes of 0 counted as 1."""
    strides = [0] * len(shape)
    acc = 1
    for d in order:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def channels_last_strides(shape: Shape) -> tuple[int, ...]:
    """The strides of ``channels_last`` (4-D) or ``channels_last_3d`` (5-D). Unlike row-major
    strides, PyTorch counts a dim of size 0 as 0 here (``(2, 0, 3, 4)`` gets ``(0, 1, 0, 0)``)."""
    strides = [0] * len(shape)
    acc = 1
    for d in _CHANNELS_LAST_ORDER[len(shape)]:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def _dense_in_order(shape: Shape, strides: Shape, order: Sequence[int]) -> bool:
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_contiguous_as(shape: Shape, strides: Shape, fmt: str) -> bool:
    """``is_contiguous(memory_format=fmt)``; ``fmt`` is ``"contiguous_format"``, ``"channels_last"``
    (only 4-D tensors can be) or ``"channels_last_3d"`` (only 5-D)."""
    if fmt == "contiguous_format":
        if 0 in shape:
            return True
        return _dense_in_order(shape, strides, range(len(shape) - 1, -1, -1))
    rank = 4 if fmt == "channels_last" else 5
    if len(shape) != rank:
        return False
    return _dense_in_order(shape, strides, _CHANNELS_LAST_ORDER[rank])  # empty or not, as PyTorch


def non_overlapping_and_dense(shape: Shape, strides: Shape) -> bool:
    """Whether the elements fill a span of memory exactly once, in some order of the dims."""
    if 0 in shape:
        return True
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _channels_last_like(shape: Shape, strides: Shape, order: Sequence[int]) -> bool:
    """PyTorch's ``is_channels_last_strides_2d/3d``: the strides grow along ``order``, with its
    tie-breaks for dims of size 1 (an ``N111`` tensor stays contiguous)."""
    if strides[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_format(shape: Shape, strides: Shape) -> str:
    """The memory format that ``shape`` and ``strides`` look like (``contiguous_format`` unless a
    4-D or 5-D tensor's strides order its channels fastest)."""
    order = _CHANNELS_LAST_ORDER.get(len(shape))
    if order is not None and _channels_last_like(shape, strides, order):
        return "channels_last" if len(shape) == 4 else "channels_last_3d"
    return "contiguous_format"


def format_strides(shape: Shape, fmt: str) -> tuple[int, ...]:
    """The strides of a new tensor of ``shape`` in the memory format ``fmt``."""
    if fmt == "contiguous_format":
        return contiguous_strides(shape)
    rank = 4 if fmt == "channels_last" else 5
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt} format")
    return channels_last_strides(shape)


def preserve_strides(shape: Shape, strides: Shape) -> tuple[int, ...]:
    """The strides ``preserve_format`` gives a copy: a non-overlapping and dense input's own, else
    dense strides in the order of the input's (PyTorch's ``infer_dense_strides``: a sliced
    transposed tensor's copy is transposed too)."""
    if non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    perm = _order_by_strides(shape, [list(strides)])
    out = [0] * len(shape)
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def _order_by_strides(shape: Shape, aligned: Sequence[Sequence[int]]) -> list[int]:
    """The dims from fastest to slowest as PyTorch's TensorIterator orders them: an insertion sort
    from row-major order, the first operand whose strides tell two dims apart deciding (a stride
    of 0, a broadcast dim, tells nothing; equal strides put the smaller dim first)."""
    ndim = len(shape)

    def should_swap(d0: int, d1: int) -> int:
        for st in aligned:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def elementwise_strides(shape: Shape, inputs: Sequence[tuple[Shape, Shape]]) -> tuple[int, ...] | None:
    """The strides of an elementwise op's output of ``shape`` from its tensor inputs' ``(shape,
    strides)``; None for row-major (the common case, which a caller allocates as usual).

    PyTorch's TensorIterator: inputs of the output's shape that are all contiguous, all
    channels_last, or all non-overlapping and dense with equal strides give their layout. Otherwise
    the output's dims are ordered from fastest to slowest by comparing the inputs' strides, the
    first input that tells two dims apart deciding (broadcast dims tell nothing; equal strides put
    the smaller dim first), and the output is dense in that order.
    """
    ndim = len(shape)
    if ndim < 2 or not inputs:
        return None
    shape = tuple(shape)
    if all(tuple(s) == shape for s, _ in inputs):
        if all(is_contiguous_as(s, st, "contiguous_format") for s, st in inputs):
            return None
        if ndim == 4 and all(is_contiguous_as(s, st, "channels_last") for s, st in inputs):
            return channels_last_strides(shape)
        first = tuple(inputs[0][1])
        if all(non_overlapping_and_dense(s, st) and tuple(st) == first for s, st in inputs):
            return first
    # each input's strides against the output's dims: 0 where it is broadcast
    aligned = []
    for s, st in inputs:
        lead = ndim - len(s)
        aligned.append([0] * lead + [0 if s[i] == 1 and shape[lead + i] != 1 else st[i] for i in range(len(s))])

    perm = _order_by_strides(shape, aligned)
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    return strides_in_order(shape, perm)


# -- memory formats ------------------------------------------------------------------------------

class memory_format:
    """How a tensor's elements are laid out in memory (``flambeau.contiguous_format``, ...)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"flambeau.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickled by name: the module global of that name (also in flambeau._api_shape)


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


def like_strides(input: Any, fmt: Any, fn: str) -> tuple | None:
    """The strides of a new tensor shaped as the tensor ``input`` in the memory format ``fmt`` (None:
    row-major).

    ``preserve_format`` (the default) keeps a non-overlapping and dense input's strides and gives
    any other input the format its strides suggest, as PyTorch's ``empty_like``."""
    name = format_name(fmt, fn)
    shape = tuple(input._data.shape)
    strides = preserve_strides(shape, input.stride()) if name == "preserve_format" else format_strides(shape, name)
    return None if strides == contiguous_strides(shape) else strides

"""Declarations of flambeau-nn's padding (F.pad's modes and the padding layers) ops.

- ``nn_constant_pad_nd(input, pad, value)``: any number of dims, negative pads crop (PyTorch's
  ``constant_pad_nd``). Its gradient is itself with the pads negated.
- ``nn_reflection_pad(input, pad)`` / ``nn_replication_pad(input, pad)``: the last
  ``len(pad) // 2`` dims (1 to 3) of a batched or unbatched input, with ``*_backward`` ops that sum
  the output gradient back onto the input positions each output element was read from.

Circular padding is a composition of slicing and ``cat`` in the functional form. ``pad`` lists
(left, right) pairs from the last dim backwards, as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Sequence

from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape

def check_pad(pad: Any) -> tuple[int, ...]:
    """``pad`` as a tuple of ints, or PyTorch's TypeError."""
    if isinstance(pad, int) or not hasattr(pad, "__iter__"):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    out = []
    for p in pad:
        if isinstance(p, bool) or not hasattr(p, "__index__"):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {len(out)}")
        out.append(int(p.__index__()))
    return tuple(out)


def pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int, int]]:
    """``[(dim, left, right), ...]`` for the dims ``pad`` covers, the last dim first."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def pad_index(size: int, left: int, right: int, mode: str) -> list[int]:
    """The input position each output position of one padded dim reads (``mode``: reflect or replicate)."""
    out = []
    for o in range(size + left + right):
        i = o - left
        if mode == "reflect":
            i = -i if i < 0 else i
            i = 2 * (size - 1) - i if i >= size else i
        else:
            i = min(max(i, 0), size - 1)
        out.append(i)
    return out


# -- constant --------------------------------------------------------------------------------------

def _constant_pad_shape(input: Tensor, pad: Sequence[int]) -> tuple[int, ...]:
    pad = check_pad(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {input.dim()} dimensions.")
    shape = list(input.shape)
    for dim, left, right in pairs(pad, input.dim()):
        new = shape[dim] + left + right
        if new < 0:
            raise RuntimeError(f"The input size {shape[dim]}, plus negative padding {left} and {right} resulted "
                               f"in a negative output size, which is invalid. Check dimension {dim} of your input.")
        shape[dim] = new
    return tuple(shape)


def _constant_pad_meta(input, pad, value=0):
    return _constant_pad_shape(input, pad), input.dtype


def _constant_pad_composite(input: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    """Crop with ``narrow``, then grow with ``cat`` of constant blocks, one dim at a time."""
    import flambeau as fb

    out = input
    for dim, left, right in pairs(pad, input.dim()):
        start, stop = max(-left, 0), out.shape[dim] - max(-right, 0)
        out = out.narrow(dim, start, max(stop - start, 0))
        parts = []
        for n in (max(left, 0), None, max(right, 0)):
            if n is None:
                parts.append(out)
            elif n:
                shape = list(out.shape)
                shape[dim] = n
                parts.append(fb.full(shape, value, dtype=out.dtype, device=out.device))
        if len(parts) > 1:
            out = fb.cat(parts, dim)
    if out is input:  # zero pads: still a new tensor, as PyTorch's
        out = input.clone()
    return out


# -- reflect / replicate ---------------------------------------------------------------------------

def check_pad_nd(op: str, input: Tensor, pad: Sequence[int], reflect: bool) -> tuple[int, ...]:
    """Checks of PyTorch's ``reflection_pad{k}d`` / ``replication_pad{k}d``; returns the output shape."""
    pad = check_pad(pad)
    k = len(pad) // 2
    if len(pad) % 2 or not 1 <= k <= 3:
        raise RuntimeError(f"{op}: padding size is expected to be 2, 4 or 6, but got: {len(pad)}")
    # every dim but the batch dim must be non-empty
    if input.dim() not in (k + 1, k + 2) or any(s == 0 for s in input.shape[input.dim() - k - 1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {fmt_shape(input.shape)}")
    shape = list(input.shape)
    names = "WHD"
    for i, (dim, left, right) in enumerate(pairs(pad, input.dim())):
        size = shape[dim]
        if reflect and not (left < size and right < size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input "
                               f"{fmt_shape(input.shape)}")
        new = size + left + right
        if new < 1:
            raise RuntimeError("input (" + ", ".join(f"{names[j]}: {input.shape[input.dim() - 1 - j]}"
                                                       for j in reversed(range(k)))
                               + f") is too small. Calculated output {names[i]}: {new}")
        shape[dim] = new
    return tuple(shape)


def _reflection_meta(input, pad):
    return check_pad_nd("reflection_pad", input, pad, True), input.dtype


def _replication_meta(input, pad):
    return check_pad_nd("replication_pad", input, pad, False), input.dtype


def _backward_meta(op: str, reflect: bool):
    def meta(grad_output, input, pad):
        shape = check_pad_nd(op, input, pad, reflect)
        if tuple(grad_output.shape) != shape:
            raise RuntimeError(f"{op}: expected grad_output of size {fmt_shape(shape)}, but got "
                               f"{fmt_shape(grad_output.shape)}")
        return tuple(input.shape), grad_output.dtype
    return meta


def _index_tensor(index: list[int], like: Tensor) -> Tensor:
    import flambeau as fb

    return fb.tensor(index, dtype=fb.int64, device=like.device)


def _pad_nd_composite(mode: str):
    def composite(input: Tensor, pad: Sequence[int]) -> Tensor:
        out = input
        for dim, left, right in pairs(check_pad(pad), input.dim()):
            out = out.index_select(dim, _index_tensor(pad_index(out.shape[dim], left, right, mode), out))
        return out
    return composite


def _pad_nd_backward_composite(mode: str):
    def composite(grad_output: Tensor, input: Tensor, pad: Sequence[int]) -> Tensor:
        import flambeau as fb

        g = grad_output
        for dim, left, right in reversed(pairs(check_pad(pad), input.dim())):
            shape = list(g.shape)
            shape[dim] = input.shape[dim]
            index = _index_tensor(pad_index(input.shape[dim], left, right, mode), g)
            g = fb.zeros(shape, dtype=g.dtype, device=g.device).index_add(dim, index, g)
        return g
    return composite


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    decls = [
        OpDecl("nn_constant_pad_nd", "(input: Tensor, pad, value=0)", _constant_pad_meta,
               composite=_constant_pad_composite,
               doc="Pads (or, with negative pads, crops) the last ``len(pad) // 2`` dims with ``value``.", **common),
    ]
    for mode, name, meta in (("reflect", "reflection", _reflection_meta), ("replicate", "replication",
                                                                            _replication_meta)):
        decls += [
            OpDecl(f"nn_{name}_pad", "(input: Tensor, pad)", meta, composite=_pad_nd_composite(mode),
                   doc=f"{mode.capitalize()} padding of the last 1 to 3 dims (``len(pad) // 2``).", **common),
            OpDecl(f"nn_{name}_pad_backward", "(grad_output: Tensor, input: Tensor, pad)",
                   _backward_meta(f"{name}_pad_backward", mode == "reflect"),
                   composite=_pad_nd_backward_composite(mode),
                   doc=f"The input gradient of ``nn_{name}_pad``.", **common),
        ]
    return decls

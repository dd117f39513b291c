"""Functional forms: padding (F.pad's modes and the padding layers)."""
from __future__ import annotations

from typing import Sequence

import flambeau as fb
from flambeau import Tensor

from .._lazy import LazyOp
from .._ops.padding import check_pad, pairs

__all__ = ["pad"]

_constant_pad_nd = LazyOp("nn_constant_pad_nd")
_reflection_pad = LazyOp("nn_reflection_pad")
_replication_pad = LazyOp("nn_replication_pad")

_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_circular(input: Tensor, pad: tuple[int, ...]) -> Tensor:
    """Circular padding as slices and ``cat``: each dim wraps around at most once; negative pads crop."""
    dims = input.dim()
    k = len(pad) // 2
    if dims - k not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(dims - 1) * 2} or {(dims - 2) * 2} respectively but got {len(pad)}")
    for dim, left, right in pairs(pad, dims):
        size = input.shape[dim]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    # As PyTorch's: negative pads crop first, then the kept part wraps around into the positive pads.
    out = input
    for dim, left, right in pairs(pad, dims):
        size = out.shape[dim]
        start, stop = max(-left, 0), size - max(-right, 0)
        core = out.narrow(dim, start, max(stop - start, 0))
        kept = core.shape[dim]
        if max(left, 0) > kept or max(right, 0) > kept:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = [core]
        if left > 0:
            parts.insert(0, core.narrow(dim, kept - left, left))
        if right > 0:
            parts.append(core.narrow(dim, 0, right))
        out = fb.cat(parts, dim) if len(parts) > 1 else core
    return out if out is not input else input.clone()


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    r"""Pads a tensor.

    ``pad`` lists (left, right) pairs for the last dims, from the last dim backwards:
    ``(pad_left, pad_right)`` pads the last dim, ``(pad_left, pad_right, pad_top, pad_bottom)`` the
    last two, and so on. Negative pads remove elements.

    Args:
        input (Tensor): N-dimensional tensor.
        pad (tuple): m-elements tuple, where :math:`\frac{m}{2} \leq` input dimensions and :math:`m` is even.
        mode: ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'constant'``.
            ``'constant'`` pads any number of dims; the other modes pad the last 1, 2 or 3 dims of a
            (C, *) or (N, C, *) input.
        value: fill value for ``'constant'`` padding. Default: ``0``.
    """
    pad = check_pad(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.dim() * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return _constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if not (1 <= k <= 3 and input.dim() in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                                  "Supported combinations for non-constant padding:\n"
                                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "reflect":
        return _reflection_pad(input, pad)
    if mode == "replicate":
        return _replication_pad(input, pad)
    return _pad_circular(input, pad)

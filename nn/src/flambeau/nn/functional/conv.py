"""Functional forms: convolution (torch.nn.functional's conv*d, conv_transpose*d, unfold and fold)."""
from __future__ import annotations

from math import prod
from typing import Any, Sequence

import flambeau as fb
from flambeau import Tensor

from .._lazy import LazyOp
from .._ops import _conv_math as C
from .._ops.conv import expand_param

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold",
           "fold"]

_convolution = LazyOp("nn_convolution")

_IntOrTuple = Any


def _batched(input: Tensor, k: int, name: str) -> bool:
    """Whether ``input`` has a batch dim; PyTorch's error for any rank but ``k + 1`` or ``k + 2``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    return input.ndim == k + 2


def same_padding(kernel: Sequence[int], dilation: Sequence[int]) -> tuple[list[int], list[int]]:
    """``padding='same'``: the left and right padding per dim (the right one larger by one where the
    total ``dilation * (kernel - 1)`` is odd, as PyTorch pads)."""
    left, right = [], []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        left.append(total // 2)
        right.append(total - total // 2)
    return left, right


def _pad_right(input: Tensor, extra: Sequence[int]) -> Tensor:
    """``input`` with ``extra[i]`` zeros appended along spatial dim i."""
    k = len(extra)
    for i, e in enumerate(extra):
        if e:
            shape = list(input.shape)
            shape[input.ndim - k + i] = e
            input = fb.cat([input, fb.zeros(shape, dtype=input.dtype, device=input.device)], input.ndim - k + i)
    return input


def _conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
          groups: int, k: int, name: str) -> Tensor:
    batched = _batched(input, k, name)
    x = input if batched else input.unsqueeze(0)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in expand_param(stride, k, "stride")):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            left, right = same_padding(weight.shape[2:], expand_param(dilation, k, "dilation"))
            if left != right:
                x = _pad_right(x, [r - lf for lf, r in zip(left, right)])
            padding = left
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = _convolution(x, weight, bias, stride, padding, dilation, False, 0, groups)
    return out if batched else out.squeeze(0)


def _conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                    output_padding: Any, groups: int, dilation: Any, k: int, name: str) -> Tensor:
    batched = _batched(input, k, name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x = input if batched else input.unsqueeze(0)
    out = _convolution(x, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out if batched else out.squeeze(0)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
           padding: _IntOrTuple | str = 0, dilation: _IntOrTuple = 1, groups: int = 1) -> Tensor:
    r"""1-D convolution over an input of shape ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        input: the input.
        weight: filters of shape ``(C_out, C_in / groups, kW)``.
        bias: optional ``(C_out,)``.
        stride, padding, dilation: an int or a 1-tuple; ``padding`` may also be ``'valid'`` (none) or
            ``'same'`` (the output as long as the input; stride 1 only).
        groups: splits the input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
           padding: _IntOrTuple | str = 0, dilation: _IntOrTuple = 1, groups: int = 1) -> Tensor:
    r"""2-D convolution over an input of shape ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Args:
        input: the input.
        weight: filters of shape ``(C_out, C_in / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, padding, dilation: an int or a 2-tuple; ``padding`` may also be ``'valid'`` or ``'same'``.
        groups: splits the input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
           padding: _IntOrTuple | str = 0, dilation: _IntOrTuple = 1, groups: int = 1) -> Tensor:
    r"""3-D convolution over an input of shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Args:
        input: the input.
        weight: filters of shape ``(C_out, C_in / groups, kD, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, padding, dilation: an int or a 3-tuple; ``padding`` may also be ``'valid'`` or ``'same'``.
        groups: splits the input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
                     padding: _IntOrTuple = 0, output_padding: _IntOrTuple = 0, groups: int = 1,
                     dilation: _IntOrTuple = 1) -> Tensor:
    r"""1-D transposed convolution ("deconvolution") of an input ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        weight: ``(C_in, C_out / groups, kW)``.
        output_padding: extra size added to one side of the output (smaller than stride or dilation).
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
                     padding: _IntOrTuple = 0, output_padding: _IntOrTuple = 0, groups: int = 1,
                     dilation: _IntOrTuple = 1) -> Tensor:
    r"""2-D transposed convolution of an input ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Args:
        weight: ``(C_in, C_out / groups, kH, kW)``.
        output_padding: extra size added to one side of each output dim (smaller than stride or dilation).
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _IntOrTuple = 1,
                     padding: _IntOrTuple = 0, output_padding: _IntOrTuple = 0, groups: int = 1,
                     dilation: _IntOrTuple = 1) -> Tensor:
    r"""3-D transposed convolution of an input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Args:
        weight: ``(C_in, C_out / groups, kD, kH, kW)``.
        output_padding: extra size added to one side of each output dim (smaller than stride or dilation).
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


# -- unfold / fold: im2col and col2im of 4-D (or unbatched 3-D) inputs ---------------------------------------


def _fold_params(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    k = expand_param(kernel_size, 2, "kernel_size")
    d = expand_param(dilation, 2, "dilation")
    p = expand_param(padding, 2, "padding")
    s = expand_param(stride, 2, "stride")
    for name, vals, least in (("kernel", k, 1), ("dilation", d, 1), ("stride", s, 1)):
        if any(v < least for v in vals):
            raise RuntimeError(f"{name} should be greater than zero, but got {name}_height: {vals[0]} "
                               f"{name}_width: {vals[1]}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


def _blocks(size: Sequence[int], k: Sequence[int], d: Sequence[int], p: Sequence[int], s: Sequence[int]) -> tuple:
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


def _fold_geometry(batch: int, channels: int, big: tuple, small: tuple, k: tuple, d: tuple, p: tuple,
                   s: tuple) -> C.Geometry:
    return C.Geometry(batch, channels, channels, 1, big, small, k, s, p, d, False)


def unfold(input: Tensor, kernel_size: _IntOrTuple, dilation: _IntOrTuple = 1, padding: _IntOrTuple = 0,
           stride: _IntOrTuple = 1) -> Tensor:
    r"""Extracts sliding local blocks (im2col): ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)``.

    ``L`` is the number of blocks; unbatched ``(C, H, W)`` gives ``(C * kH * kW, L)``.
    """
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    x = input if input.ndim == 4 else input.unsqueeze(0)
    if x.shape[1] == 0 or any(v == 0 for v in x.shape[2:]):
        raise RuntimeError(f"Expected non-empty 3D or 4D input tensor, but got input of size {list(input.shape)}")
    size = tuple(x.shape[2:])
    small = _blocks(size, k, d, p, s)
    if any(v < 1 for v in small):
        raise RuntimeError(f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({small[0]}, {small[1]}), but its components must be at least one.")
    g = _fold_geometry(x.shape[0], x.shape[1], size, small, k, d, p, s)
    cols = C.im2col(x, g, C.window_index(g, x.device))
    out = cols.reshape(x.shape[0], x.shape[1] * prod(k), prod(small))
    return out if input.ndim == 4 else out.squeeze(0)


def fold(input: Tensor, output_size: _IntOrTuple, kernel_size: _IntOrTuple, dilation: _IntOrTuple = 1,
         padding: _IntOrTuple = 0, stride: _IntOrTuple = 1) -> Tensor:
    r"""Combines sliding local blocks into a tensor (col2im), summing overlaps:
    ``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``; unbatched ``(C * kH * kW, L)`` -> ``(C, *output_size)``.
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    size = expand_param(output_size, 2, "output_size")
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    if any(v < 1 for v in size):
        raise RuntimeError(f"expected output spatial size to be greater than zero, but got output_height: {size[0]} "
                           f"output_width: {size[1]}")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    kk = prod(k)
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={x.shape[1]} and kernel_size=({k[0]}, {k[1]}).")
    small = _blocks(size, k, d, p, s)
    if any(v < 1 for v in small):
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
                           f"calculated shape of the array of sliding blocks as ({small[0]}, {small[1]}), but its "
                           f"components must be at least one.")
    if x.shape[2] != prod(small):
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected "
                           f"size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{small[0]} * {small[1]} = {prod(small)}, but got input.size(2)={x.shape[2]}.")
    channels = x.shape[1] // kk
    g = _fold_geometry(x.shape[0], channels, tuple(size), small, k, d, p, s)
    out = C.col2im(x.reshape(x.shape[0], channels, kk, prod(small)), g, C.window_index(g, x.device))
    return out if input.ndim == 3 else out.squeeze(0)

"""Modules: convolution (``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d``, their lazy forms, ``Unfold``, ``Fold``)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import flambeau
from flambeau import Tensor

from .. import init
from ..functional import conv as F
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "Unfold", "Fold"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _tuple(value: Any, n: int) -> tuple:
    """PyTorch's ``_ntuple``: an iterable as a tuple, anything else repeated ``n`` times."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


def _reverse_repeat(t: Sequence[int]) -> tuple:
    """``(a, b)`` -> ``(b, b, a, a)``: the F.pad order of a symmetric padding."""
    return tuple(x for x in reversed(t) for _ in range(2))


def _pad(input: Tensor, amounts: Sequence[int], mode: str) -> Tensor:
    from ..functional.padding import pad  # the padding family's F.pad

    return pad(input, list(amounts), mode=mode)


class _ConvNd(Module):
    """What every convolution module shares: arguments, parameters, initialisation and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _dims = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, transposed: bool, output_padding: Any, groups: int, bias: bool, padding_mode: str,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        n = self._dims
        kernel_size, stride, dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        if not isinstance(padding, str):
            padding = _tuple(padding, n)
        output_padding = _tuple(output_padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # the F.pad argument of a non-zeros padding_mode: last dim first, (left, right) each
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                left, right = F.same_padding(kernel_size, dilation)
                for i in range(n):
                    self._reversed_padding_repeated_twice[2 * (n - 1 - i)] = left[i]
                    self._reversed_padding_repeated_twice[2 * (n - 1 - i) + 1] = right[i]
        else:
            self._reversed_padding_repeated_twice = list(_reverse_repeat(padding))
        shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups))
        self.weight = Parameter(flambeau.empty(shape + tuple(kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(flambeau.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""PyTorch's default: weight from kaiming-uniform with ``a=sqrt(5)``, bias from U(-1/sqrt(fan_in), ..)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


_CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T_FN = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = _CONV_FN[self._dims]
        if self.padding_mode != "zeros":
            return conv(_pad(input, self._reversed_padding_repeated_twice, self.padding_mode), weight, bias,
                        self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    r"""1-D convolution over an input ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        in_channels, out_channels: channels of the input and of the output.
        kernel_size, stride, dilation: an int or a 1-tuple.
        padding: an int, a 1-tuple, ``'valid'`` or ``'same'`` (default 0).
        groups: blocked connections from input to output channels (default 1).
        bias: whether to learn an additive bias (default ``True``).
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Attributes:
        weight: ``(out_channels, in_channels / groups, kernel_size)`` from :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})`,
            :math:`k = groups / (C_{in} \cdot \text{kernel\_size})`; bias the same.
    """

    _dims = 1


class Conv2d(_Conv):
    r"""2-D convolution over an input ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Arguments as :class:`Conv1d`, with 2-tuples; ``weight`` is ``(out_channels, in_channels / groups, kH, kW)``.
    """

    _dims = 2


class Conv3d(_Conv):
    r"""3-D convolution over an input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Arguments as :class:`Conv1d`, with 3-tuples; ``weight`` is ``(out_channels, in_channels / groups, kD, kH, kW)``.
    """

    _dims = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None, stride: Sequence[int],
                        padding: Sequence[int], kernel_size: Sequence[int], num_spatial_dims: int,
                        dilation: Sequence[int] | None = None) -> list[int]:
        """The output_padding that gives ``output_size`` (``self.output_padding`` when None)."""
        if output_size is None:
            return list(self.output_padding)
        non_spatial = 2 if input.dim() == num_spatial_dims + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {non_spatial + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            size = ((input.shape[d + non_spatial] - 1) * stride[d] - 2 * padding[d]
                    + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {input.shape[non_spatial:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._dims
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, n,
                                              self.dilation)
        return _CONV_T_FN[n](input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                             self.dilation)


class ConvTranspose1d(_ConvTranspose):
    r"""1-D transposed convolution of an input ``(N, C_in, L)`` or ``(C_in, L)`` (the gradient of
    :class:`Conv1d` with respect to its input).

    Args:
        in_channels, out_channels, kernel_size, stride, padding, groups, bias, dilation: as :class:`Conv1d`.
        output_padding: extra size added to one side of the output (smaller than stride or dilation).
        padding_mode: ``'zeros'`` only.

    ``forward(input, output_size=None)``: ``output_size`` picks the output_padding that gives that size.
    ``weight`` is ``(in_channels, out_channels / groups, kernel_size)``.
    """

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    r"""2-D transposed convolution of an input ``(N, C_in, H, W)`` or ``(C_in, H, W)``; arguments as
    :class:`ConvTranspose1d` with 2-tuples, ``weight`` ``(in_channels, out_channels / groups, kH, kW)``."""

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    r"""3-D transposed convolution of an input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``; arguments as
    :class:`ConvTranspose1d` with 3-tuples, ``weight`` ``(in_channels, out_channels / groups, kD, kH, kW)``."""

    _dims = 3


class _LazyConvMixin(LazyModuleMixin):
    """The lazy part of ``LazyConv*``/``LazyConvTranspose*``: ``in_channels`` from the first input."""

    groups: int
    in_channels: int
    out_channels: int
    kernel_size: tuple
    transposed: bool
    weight: UninitializedParameter
    bias: UninitializedParameter

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            n = self._dims  # type: ignore[attr-defined]
            if input.ndim not in (n + 1, n + 2):
                raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                                   f"{self._get_name()}, but got input of size: {list(input.shape)}")  # type: ignore
            self.in_channels = input.shape[1] if input.ndim == n + 2 else input.shape[0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with flambeau.no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups)
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    r"""A :class:`Conv1d` whose ``in_channels`` comes from the first input (then it becomes a Conv1d)."""

    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    r"""A :class:`Conv2d` whose ``in_channels`` comes from the first input (then it becomes a Conv2d)."""

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    r"""A :class:`Conv3d` whose ``in_channels`` comes from the first input (then it becomes a Conv3d)."""

    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    r"""A :class:`ConvTranspose1d` whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    r"""A :class:`ConvTranspose2d` whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    r"""A :class:`ConvTranspose3d` whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class Unfold(Module):
    r"""Extracts sliding local blocks from a batched input (im2col); see :func:`flambeau.nn.functional.unfold`."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}".format(
            **self.__dict__)


class Fold(Module):
    r"""Combines sliding local blocks into a tensor (col2im); see :func:`flambeau.nn.functional.fold`."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))

"""Modules: pooling (max, average, adaptive, fractional, LP, unpooling).

Attributes, defaults and ``repr`` are PyTorch's: ``MaxPool*``, ``AvgPool2d``/``3d`` and ``LPPool*``
keep their arguments as given, ``AvgPool1d`` and ``MaxUnpool*`` as tuples.
"""
from __future__ import annotations

from typing import Any

from flambeau._tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
]


def _ntuple(value: Any, k: int) -> tuple:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * k


# -- max pooling --------------------------------------------------------------------------------------

class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    r"""1-d max pooling over ``(N, C, L)`` or ``(C, L)`` input.

    Args:
        kernel_size: the window size.
        stride: the window step (default: ``kernel_size``).
        padding: implicit -inf padding on both sides, at most half the kernel size.
        dilation: the step between elements of a window.
        return_indices: also return the flat indices of the maxima (for :class:`MaxUnpool1d`).
        ceil_mode: round the output size up instead of down.
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    r"""2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``kernel_size``, ``stride``, ``padding`` and ``dilation`` are an int or a pair (height, width);
    see :class:`MaxPool1d` for their meaning. Output size per dim:
    ``floor((in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)`` (ceil with ``ceil_mode``).
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    r"""3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input. See :class:`MaxPool2d`."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


# -- max unpooling ------------------------------------------------------------------------------------

class _MaxUnpoolNd(Module):
    _k = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._k)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._k)
        self.padding = _ntuple(padding, self._k)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""The partial inverse of :class:`MaxPool1d`: values written at their indices, zeros elsewhere.

    ``forward(input, indices, output_size=None)``; ``output_size`` picks among the sizes that pool
    to the input's.
    """

    _k = 1

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    r"""The partial inverse of :class:`MaxPool2d`. See :class:`MaxUnpool1d`."""

    _k = 2

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    r"""The partial inverse of :class:`MaxPool3d`. See :class:`MaxUnpool1d`."""

    _k = 3

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


# -- average pooling ----------------------------------------------------------------------------------

class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    r"""1-d average pooling over ``(N, C, L)`` or ``(C, L)`` input.

    Args:
        kernel_size, stride, padding, ceil_mode: as :class:`MaxPool1d` (zero padding).
        count_include_pad: divide by the window's size including the padding it covers.
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    r"""2-d average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Args:
        kernel_size, stride, padding, ceil_mode, count_include_pad: see :class:`AvgPool1d`.
        divisor_override: when given, every window's sum is divided by it instead of its size.
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    r"""3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input. See :class:`AvgPool2d`."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


# -- fractional max pooling ---------------------------------------------------------------------------

class _FractionalMaxPoolNd(Module):
    _k = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, self._k)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, self._k) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self._k) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    r"""2-d fractional max pooling (Graham, 2014) over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Args:
        kernel_size: the window size.
        output_size: the output's (H, W); or
        output_ratio: the output's size as a fraction (in (0, 1)) of the input's.
        return_indices: also return the flat indices of the maxima.
    """

    _k = 2

    def forward(self, input: Tensor) -> Any:
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                       self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    r"""3-d fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.
    See :class:`FractionalMaxPool2d`."""

    _k = 3

    def forward(self, input: Tensor) -> Any:
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size, self.output_ratio,
                                       self.return_indices, _random_samples=self._random_samples)


# -- LP pooling ---------------------------------------------------------------------------------------

class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    r"""1-d power-average pooling: ``(sum over the window of x^p)^(1/p)`` with ``p = norm_type``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    r"""2-d power-average pooling. See :class:`LPPool1d`."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    r"""3-d power-average pooling. See :class:`LPPool1d`."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


# -- adaptive pooling ---------------------------------------------------------------------------------

class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    r"""1-d adaptive max pooling to ``output_size`` over ``(N, C, L)`` or ``(C, L)`` input."""

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    r"""2-d adaptive max pooling to ``output_size`` (``None`` entries keep the input's size)."""

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    r"""3-d adaptive max pooling to ``output_size`` (``None`` entries keep the input's size)."""

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    r"""1-d adaptive average pooling to ``output_size`` over ``(N, C, L)`` or ``(C, L)`` input."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    r"""2-d adaptive average pooling to ``output_size`` (``None`` entries keep the input's size)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    r"""3-d adaptive average pooling to ``output_size`` (``None`` entries keep the input's size)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)

"""Modules: vision (pixel/channel shuffle, upsampling)."""
from __future__ import annotations

from typing import Any

from flambeau import Tensor

from ..functional import vision as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d"]


class PixelShuffle(Module):
    r"""Rearranges elements in a tensor of shape :math:`(*, C \times r^2, H, W)` to a tensor of shape
    :math:`(*, C, H \times r, W \times r)`, where r is an upscale factor.

    Args:
        upscale_factor (int): factor to increase spatial resolution by.
    """

    __constants__ = ["upscale_factor"]
    upscale_factor: int

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    r"""Reverses :class:`PixelShuffle`: :math:`(*, C, H \times r, W \times r)` to :math:`(*, C \times r^2, H, W)`.

    Args:
        downscale_factor (int): factor to decrease spatial resolution by.
    """

    __constants__ = ["downscale_factor"]
    downscale_factor: int

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    r"""Divides the channels of a :math:`(N, C, *)` tensor into ``groups`` groups and rearranges them as
    :math:`(N, C/g, g, *)`, keeping the original shape.

    Args:
        groups (int): number of groups to divide channels in.
    """

    __constants__ = ["groups"]
    groups: int

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Upsample(Module):
    r"""Upsamples multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data.

    Args:
        size (int or Tuple[int]): output spatial sizes.
        scale_factor (float or Tuple[float]): multiplier for spatial size.
        mode (str): ``'nearest'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'``,
            ``'area'`` or ``'nearest-exact'``. Default: ``'nearest'``.
        align_corners (bool, optional): see :func:`~flambeau.nn.functional.interpolate`.
        recompute_scale_factor (bool, optional): see :func:`~flambeau.nn.functional.interpolate`.
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]
    name: str

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: dict) -> None:
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info


class UpsamplingNearest2d(Upsample):
    r"""2D nearest neighbor upsampling: ``Upsample(size, scale_factor, mode='nearest')``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""2D bilinear upsampling with ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

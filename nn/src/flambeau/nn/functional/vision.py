"""Functional forms: vision (pixel/channel shuffle, interpolation, grid sampling)."""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import flambeau as fb
from flambeau import Tensor
from flambeau.ops.meta import fmt_shape, type_name as _type_name

from .._lazy import LazyOp
from .._ops.vision import grid_sample_composite, grid_sampler_checks, out_size, resample_plan

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "interpolate",
           "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid"]

_resample = LazyOp("nn_resample")
_grid_sample_bilinear2d = LazyOp("nn_grid_sample_bilinear2d")


# -- pixel and channel shuffle -------------------------------------------------------------------------

def _check_factor(op: str, what: str, factor: Any) -> int:
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(f"{op}(): argument '{what}' (position 2) must be int, not {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {factor}")
    return factor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    r"""Rearranges elements of shape :math:`(*, C \times r^2, H, W)` to :math:`(*, C, H \times r, W \times r)`.

    Args:
        input (Tensor): the input tensor.
        upscale_factor (int): factor to increase spatial resolution by.
    """
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    r"""Reverses :func:`pixel_shuffle`: :math:`(*, C, H \times r, W \times r)` to :math:`(*, C \times r^2, H, W)`.

    Args:
        input (Tensor): the input tensor.
        downscale_factor (int): factor to decrease spatial resolution by.
    """
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    r"""Divides the channels (dim 1) into ``groups`` groups and interleaves them:
    :math:`(N, g \cdot k, *)` viewed as :math:`(N, g, k, *)` and transposed to :math:`(N, k, g, *)`.

    Args:
        input (Tensor): the input tensor, of at least 3 dims.
        groups (int): number of groups to divide channels in.
    """
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{fmt_shape(input.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"channel_shuffle(): argument 'groups' (position 2) must be int, not {type(groups).__name__}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    r"""Divides the channels of a :math:`(N, C, *)` tensor into ``groups`` groups and rearranges them as
    :math:`(N, C/g, g, *)` while keeping the original shape. See :class:`~flambeau.nn.ChannelShuffle`."""
    return native_channel_shuffle(input, groups)


# -- interpolate ---------------------------------------------------------------------------------------

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area", "nearest-exact")
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "lanczos": 4}
#: the mode/rank mismatches PyTorch names; the others get its generic "Input Error"
_NAMED_MISMATCH = {"linear", "bilinear", "trilinear"}


def _spatial_arg(value: Any, k: int, what: str, input: Tensor) -> list | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != k:
            kind = "output size of" if what == "size" else "scale_factor of shape"
            fmt = "output size in (o1, o2, ...,oK)" if what == "size" else "scale_factor in (s1, s2, ...,sK)"
            head = "Input and output" if what == "size" else "Input and scale_factor"
            raise ValueError(f"{head} must have the same number of spatial dimensions, but got input with spatial "
                             f"dimensions of {list(input.shape[2:])} and {kind} {value}. Please provide input tensor "
                             f"in (N, C, d1, d2, ...,dK) format and {fmt} format.")
        return list(value)
    return [value] * k


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    r"""Down/up samples the input to the given ``size`` or by the given ``scale_factor``.

    The input is :math:`(N, C, d_1, ..., d_K)` with 1 to 3 spatial dims (3-D, 4-D or 5-D).

    Args:
        input (Tensor): the input tensor.
        size (int or Tuple[int]): output spatial size.
        scale_factor (float or Tuple[float]): multiplier for spatial size (one per spatial dim, or one for all).
        mode (str): ``'nearest'`` | ``'linear'`` | ``'bilinear'`` | ``'bicubic'`` | ``'trilinear'`` |
            ``'lanczos'`` (antialiased Lanczos-3, 4-D only) | ``'area'`` | ``'nearest-exact'``.
            Default: ``'nearest'``.
        align_corners (bool, optional): for the linear and cubic modes: align the centers of the corner
            pixels of input and output (True) or their outer edges (False, the default).
        recompute_scale_factor (bool, optional): compute the scale from the output size, rather than
            use ``scale_factor`` in the interpolation itself.
        antialias (bool): apply anti-aliasing when downsampling (bilinear, bicubic and lanczos on 4-D
            input; the result matches Pillow's resampling with ``align_corners=False``).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    k = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sizes = _spatial_arg(size, k, "size", input)
    factors = _spatial_arg(scale_factor, k, "scale_factor", input)
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and sizes is None:
        recompute_scale_factor = True
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode in _NAMED_MISMATCH and input.dim() in (3, 4, 5) and input.dim() != _MODE_DIMS[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_MODE_DIMS[mode]}D input")
    if mode not in _MODES or input.dim() not in (3, 4, 5) or input.dim() != _MODE_DIMS.get(mode, input.dim()):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if sizes is not None:
        out_sizes = [int(s) for s in sizes]
        scales: list[float | None] = [None] * k
    else:
        for f in factors:
            if not math.isfinite(float(f)):
                raise ValueError(f"scale_factor must be finite, got {f}")
        out_sizes = [out_size(n, float(f)) for n, f in zip(input.shape[2:], factors)]
        scales = [None] * k if recompute_scale_factor else [float(f) for f in factors]
    in_sizes = list(input.shape[2:])
    if any(n <= 0 for n in in_sizes) or any(m <= 0 for m in out_sizes):
        names = "DHW"[3 - k:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{c}: {n}" for c, n in zip(names, in_sizes)) + ") output ("
            + ", ".join(f"{c}: {m}" for c, m in zip(names, out_sizes)) + ")")
    if mode != "nearest" and mode != "nearest-exact" and not input.dtype.is_floating_point:
        kind = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "bicubic": "upsample_bicubic2d",
                "trilinear": "upsample_trilinear3d", "lanczos": "_upsample_lanczos2d_aa",
                "area": f"adaptive_avg_pool{k}d"}[mode]
        raise NotImplementedError(f'"{kind}" not implemented for \'{_type_name(input.dtype)}\'')
    if mode == "area":
        scales = [None] * k
    index, weight, layout = resample_plan(mode, in_sizes, out_sizes, bool(align_corners), scales, antialias)
    wdtype = input.dtype if input.dtype in (fb.float32, fb.float64) else fb.float32
    return _resample(input, fb.tensor(index, dtype=fb.int64, device=input.device),
                     fb.tensor(weight, dtype=wdtype, device=input.device), layout)


def upsample(input: Tensor, size: int | Sequence[int] | None = None,
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    r"""Deprecated: :func:`interpolate` with the same arguments."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    r"""Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    r"""Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- grid_sample and affine_grid -----------------------------------------------------------------------

def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    r"""Samples ``input`` at the locations in ``grid`` (normalized to [-1, 1]).

    For a 4-D input :math:`(N, C, H_{in}, W_{in})` and grid :math:`(N, H_{out}, W_{out}, 2)` (x, y),
    the output is :math:`(N, C, H_{out}, W_{out})`; 5-D input and grid (x, y, z) likewise.

    Args:
        input (Tensor): input of shape :math:`(N, C, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        grid (Tensor): flow-field of shape :math:`(N, H_{out}, W_{out}, 2)` or
            :math:`(N, D_{out}, H_{out}, W_{out}, 3)`.
        mode (str): ``'bilinear'`` | ``'nearest'`` | ``'bicubic'`` (4-D only). Default: ``'bilinear'``.
        padding_mode (str): ``'zeros'`` | ``'border'`` | ``'reflection'``. Default: ``'zeros'``.
        align_corners (bool, optional): -1 and 1 are the corner pixels' centers (True) or their outer
            edges (False, the default).
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = bool(align_corners)
    grid_sampler_checks(input, grid, mode)
    if input.dim() == 4 and mode == "bilinear":
        return _grid_sample_bilinear2d(input, grid, padding_mode, align_corners)
    return grid_sample_composite(input, grid, mode, padding_mode, align_corners)


def _base_coords(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """PyTorch's linspace_from_neg_one: ``steps`` points on [-1, 1], shrunk to pixel centers unless aligned."""
    if steps <= 1:
        return fb.zeros(max(steps, 1), dtype=like.dtype, device=like.device)
    r = fb.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    r"""A 2-D or 3-D flow field (sampling grid) for :func:`grid_sample`, from affine matrices ``theta``.

    Args:
        theta (Tensor): input batch of affine matrices with shape (:math:`N \times 2 \times 3`) for 2D
            or (:math:`N \times 3 \times 4`) for 3D.
        size (torch.Size): the target output image size: (:math:`N \times C \times H \times W`) for 2D
            or (:math:`N \times C \times D \times H \times W`) for 3D.
        align_corners (bool, optional): as for :func:`grid_sample`. Default: ``False``.

    Returns:
        output (Tensor): output Tensor of size (:math:`N \times H \times W \times 2`) or
        (:math:`N \times D \times H \times W \times 3`).
    """
    align_corners = bool(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: expected theta of batch size {size[0]}, got {theta.shape[0]}")
    k = len(spatial)
    # base[..., :] = (x, y[, z], 1): x runs along the last spatial dim
    axes = [_base_coords(s, align_corners, theta) for s in spatial]
    parts = []
    for d in reversed(range(k)):
        shape = [1] * k
        shape[d] = spatial[d]
        parts.append(axes[d].reshape(shape).expand(*spatial))
    parts.append(fb.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = fb.stack(parts, -1).reshape(1, -1, k + 1)
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), k)
    return grid.reshape([size[0]] + spatial + [k])

"""Declarations of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops.

Every mode of ``F.interpolate`` is separable: along each resized dim, output position ``o`` is a
weighted sum of a few input positions (its *taps*): one for nearest, two for linear, four for
bicubic, a window for area and antialiased resampling. ``nn_resample`` applies such taps to the
last ``k`` dims of a tensor, and ``nn_resample_backward`` sums gradients back through them. The
taps themselves are plain index/weight arrays computed from the sizes (:func:`taps`), so one
kernel (and one composite) serves every mode and PyTorch's index formulas live in one place.

``taps`` is ``((out_size, count), ...)`` for the resized dims in order; ``index`` (int64) and
``weight`` (float) hold, dim after dim, ``out_size * count`` entries each, the taps of output
position ``o`` at ``[o * count, (o + 1) * count)``. A count of 1 means a plain copy (the weight is
1 and is not read), which keeps nearest resampling exact for every dtype.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import flambeau as fb
from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape

# -- PyTorch's index formulas ------------------------------------------------------------------------

_CUBIC_A = -0.75  # the cubic convolution coefficient of PyTorch's bicubic interpolation
_CUBIC_A_AA = -0.5  # antialiased bicubic uses PIL's


def _cubic1(x: np.ndarray, a: float) -> np.ndarray:  # |x| <= 1
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x: np.ndarray, a: float) -> np.ndarray:  # 1 < |x| < 2
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def area_scale(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> float:
    """PyTorch's ``area_pixel_compute_scale``: input pixels per output pixel."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _source(scale: float, o: np.ndarray, align_corners: bool, cubic: bool) -> np.ndarray:
    """PyTorch's ``area_pixel_compute_source_index``: the input coordinate of output position ``o``."""
    if align_corners:
        return scale * o
    src = scale * (o + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def taps(mode: str, in_size: int, out_size: int, align_corners: bool, scale: float | None,
         antialias: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``(index, weight)`` arrays, each ``(out_size, count)``, of one resized dim (float64 weights)."""
    o = np.arange(out_size, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        s = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
        src = np.floor((o + (0.5 if mode == "nearest-exact" else 0.0)) * s)
        index = np.minimum(src.astype(np.int64), in_size - 1)[:, None]
        return index, np.ones_like(index, dtype=np.float64)
    if mode == "area":  # adaptive average pooling: window [floor(o * in / out), ceil((o + 1) * in / out))
        start = (np.arange(out_size) * in_size) // out_size
        end = -((-(np.arange(out_size) + 1) * in_size) // out_size)
        count = int((end - start).max())
        j = start[:, None] + np.arange(count)[None, :]
        valid = j < end[:, None]
        weight = np.where(valid, 1.0 / (end - start)[:, None], 0.0)
        return np.where(valid, j, start[:, None]), weight
    s = area_scale(in_size, out_size, align_corners, scale)
    if mode == "lanczos" or (antialias and mode in ("linear", "bilinear", "bicubic")):
        return _antialias_taps(mode, in_size, out_size, s, align_corners)
    if mode == "bicubic":
        src = _source(s, o, align_corners, True)
        i0 = np.floor(src)
        t = (src - i0)[:, None]
        weight = np.concatenate([_cubic2(t + 1, _CUBIC_A), _cubic1(t, _CUBIC_A), _cubic1(1 - t, _CUBIC_A),
                                 _cubic2(2 - t, _CUBIC_A)], axis=1)
        index = np.clip(i0.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :], 0, in_size - 1)
        return index, weight
    # linear, bilinear, trilinear
    src = _source(s, o, align_corners, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.where(i0 < in_size - 1, i0 + 1, i0)
    l1 = np.clip(src - i0, 0.0, 1.0)
    return np.stack([i0, i1], axis=1), np.stack([1.0 - l1, l1], axis=1)


def _antialias_taps(mode: str, in_size: int, out_size: int, scale: float,
                    align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's antialiased (PIL-style) weights: the filter stretched by the scale when downsampling,
    each output's window clipped to the input and its weights normalized to sum to 1."""
    interp = {"bicubic": 4, "lanczos": 6}.get(mode, 2)
    support = interp / 2 * scale if scale >= 1.0 else interp / 2.0
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    delta = 0.0  # PyTorch's align_corners shift is 0 for antialiasing
    rows = []
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5 + delta), 0)
        xsize = min(int(center + support + 0.5 + delta), in_size) - xmin
        x = np.abs((np.arange(xsize) + xmin - center + 0.5 - delta) * invscale)
        if mode == "bicubic":
            w = np.where(x < 1.0, _cubic1(x, _CUBIC_A_AA), np.where(x < 2.0, _cubic2(x, _CUBIC_A_AA), 0.0))
        elif mode == "lanczos":  # Lanczos-3: sinc(x) * sinc(x / 3) on |x| < 3
            w = np.where(x < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
        else:
            w = np.where(x < 1.0, 1.0 - x, 0.0)
        total = w.sum()
        rows.append((xmin, w / total if total != 0 else w))
    count = max(1, max(len(w) for _, w in rows))
    index = np.zeros((out_size, count), dtype=np.int64)
    weight = np.zeros((out_size, count), dtype=np.float64)
    for i, (xmin, w) in enumerate(rows):
        index[i, :] = xmin
        index[i, :len(w)] = xmin + np.arange(len(w))
        weight[i, :len(w)] = w
    return index, weight


def resample_plan(mode: str, in_sizes: Sequence[int], out_sizes: Sequence[int], align_corners: bool,
                  scales: Sequence[float | None], antialias: bool = False) -> tuple[np.ndarray, np.ndarray, tuple]:
    """``(index, weight, taps)`` for ``nn_resample`` over the resized dims."""
    indices, weights, layout = [], [], []
    for n, m, s in zip(in_sizes, out_sizes, scales):
        index, weight = taps(mode, n, m, align_corners, s, antialias)
        indices.append(index.ravel())
        weights.append(weight.ravel())
        layout.append((m, index.shape[1]))
    return np.concatenate(indices), np.concatenate(weights), tuple(layout)


# -- nn_resample -------------------------------------------------------------------------------------

def check_taps(op: str, input_shape: Sequence[int], index: Tensor, weight: Tensor, layout: Any) -> None:
    try:
        layout = tuple((int(m), int(c)) for m, c in layout)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: taps must be a sequence of (out_size, count) pairs, got {layout!r}") from None
    k = len(layout)
    if not 1 <= k <= 3 or len(input_shape) < k:
        raise RuntimeError(f"{op}: expected 1 to 3 resized dims of an input with at least as many dims, got {k} "
                           f"for input of size {fmt_shape(input_shape)}")
    if any(m < 0 or c < 1 for m, c in layout):
        raise RuntimeError(f"{op}: invalid taps {layout}")
    total = sum(m * c for m, c in layout)
    if index.dtype.is_floating_point or index.dtype.is_complex or str(index.dtype) != "flambeau.int64":
        raise RuntimeError(f"{op}: expected index of dtype int64, got {index.dtype}")
    if not weight.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point weight, got {weight.dtype}")
    for name, t in (("index", index), ("weight", weight)):
        if t.dim() != 1 or t.numel() != total:
            raise RuntimeError(f"{op}: expected {name} of size [{total}], got {fmt_shape(t.shape)}")
        if t.device != index.device:
            raise RuntimeError(f"{op}: expected all tensors to be on the same device")


def _resample_meta(input, index, weight, taps):
    check_taps("nn_resample", input.shape, index, weight, taps)
    k = len(taps)
    if any(s == 0 for s in input.shape[input.dim() - k:]) and any(m for m, _ in taps):
        raise RuntimeError(f"nn_resample: cannot resample empty dims of input of size {fmt_shape(input.shape)}")
    if any(c > 1 for _, c in taps) and not input.dtype.is_floating_point:
        raise RuntimeError(f"nn_resample: weighted taps need a floating point input, got {input.dtype}")
    return tuple(input.shape[:input.dim() - k]) + tuple(m for m, _ in taps), input.dtype


def _resample_backward_meta(grad_output, index, weight, input_size, taps):
    input_size = tuple(int(s) for s in input_size)
    check_taps("nn_resample_backward", input_size, index, weight, taps)
    k = len(taps)
    expected = input_size[:len(input_size) - k] + tuple(m for m, _ in taps)
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"nn_resample_backward: expected grad_output of size {fmt_shape(expected)}, got "
                           f"{fmt_shape(grad_output.shape)}")
    if not grad_output.dtype.is_floating_point:
        raise RuntimeError(f"nn_resample_backward: expected a floating point grad_output, got {grad_output.dtype}")
    return input_size, grad_output.dtype


def _split(index: Tensor, weight: Tensor, layout: Sequence[tuple[int, int]]):
    """Per resized dim: (its index, its weight, out_size, count)."""
    at = 0
    for m, c in layout:
        yield index.narrow(0, at, m * c), weight.narrow(0, at, m * c), m, c
        at += m * c


def _wide(x: Tensor) -> Tensor:
    import flambeau as fb

    return x.to(fb.float32) if x.dtype in (fb.float16, fb.bfloat16) else x


def _resample_composite(input: Tensor, index: Tensor, weight: Tensor, taps: Sequence[tuple[int, int]]) -> Tensor:
    """Per dim: gather the taps with ``index_select``, weight them, sum them."""
    k = len(taps)
    x = _wide(input) if any(c > 1 for _, c in taps) else input
    for d, (idx, w, m, c) in enumerate(_split(index, weight, taps)):
        dim = input.dim() - k + d
        x = x.index_select(dim, idx)
        if c > 1:
            shape = list(x.shape)
            x = x.reshape(shape[:dim] + [m, c] + shape[dim + 1:])
            x = (x * w.to(x.dtype).reshape([m, c] + [1] * (x.dim() - dim - 2))).sum(dim + 1)
    return x.to(input.dtype)


def _resample_backward_composite(grad_output: Tensor, index: Tensor, weight: Tensor, input_size: Sequence[int],
                                 taps: Sequence[tuple[int, int]]) -> Tensor:
    """Per dim, last first: spread each output gradient onto its taps with ``index_add``."""
    import flambeau as fb

    k = len(taps)
    g = _wide(grad_output)
    parts = list(_split(index, weight, taps))
    for d in reversed(range(k)):
        idx, w, m, c = parts[d]
        dim = len(input_size) - k + d
        if c > 1:
            g = g.unsqueeze(dim + 1) * w.to(g.dtype).reshape([m, c] + [1] * (g.dim() - dim - 1))
            shape = list(g.shape)
            g = g.reshape(shape[:dim] + [m * c] + shape[dim + 2:])
        shape = list(g.shape)
        shape[dim] = input_size[dim]
        g = fb.zeros(shape, dtype=g.dtype, device=g.device).index_add(dim, idx, g)
    return g.to(grad_output.dtype)


# -- grid sampling -----------------------------------------------------------------------------------

def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixel coordinates: corner pixel centers (align_corners) or outer edges."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflects ``x`` into [twice_low / 2, twice_high / 2] as often as needed (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return fb.zeros_like(x)  # even for a non-finite x, as PyTorch
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = (x - low).abs()
    extra = x.fmod(span)
    flips = (x / span).floor()
    even = flips.remainder(2) == 0
    return fb.where(even, extra + low, span - extra + low)


def _clip(x: Tensor, size: int) -> Tensor:
    """Clamps to [0, size - 1]; NaN goes to 0, as PyTorch's clip_coordinates."""
    x = x.clamp(0, size - 1)
    return fb.where(x.isnan(), fb.zeros_like(x), x)


def _pad_coord(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return _clip(x, size)
    return x


def _gather(flat: Tensor, coords: list[Tensor], sizes: list[int], padding_mode: str) -> Tensor:
    """``flat`` (N, C, prod(sizes)) read at integer ``coords`` (each (N, P)); zero where out of bounds."""
    valid = None
    linear = None
    for c, n in zip(coords, sizes):
        # a non-finite or huge coordinate is far out of bounds (PyTorch sends it to -100); its
        # weight, not this read, carries a NaN into the result
        c = fb.where(c.isfinite() & (c.abs() < 1e15), c, fb.full_like(c, -100.0))
        inside = (c >= 0) & (c <= n - 1)
        valid = inside if valid is None else valid & inside
        c = c.clamp(0, n - 1)
        linear = c if linear is None else linear * n + c
    index = linear.to(fb.int64).unsqueeze(1).expand(flat.shape[0], flat.shape[1], linear.shape[1])
    values = flat.gather(2, index)
    return values * valid.unsqueeze(1).to(values.dtype)  # padded coordinates are in bounds unless not finite


def _cubic_weights(t: Tensor) -> list[Tensor]:
    a = -0.75
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


def grid_sampler_checks(input: Tensor, grid: Tensor, mode: str) -> None:
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {fmt_shape(input.shape)} and grid with sizes {fmt_shape(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {fmt_shape(input.shape)} and grid with sizes {fmt_shape(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {fmt_shape(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {fmt_shape(input.shape)} with dimension {i} being empty")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"grid_sampler_{input.dim() - 2}d_cpu\" not implemented for "
                           f"'{str(input.dtype).split('.')[-1]}'")



def grid_sample_composite(input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool) -> Tensor:
    """``F.grid_sample`` written with flambeau ops (gathers of the corners, weighted): any mode, 4-D or 5-D."""
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])  # (H, W) or (D, H, W)
    out_spatial = list(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, len(sizes))
    # grid's last dim is (x, y[, z]): x indexes the last input dim
    coords = [_unnormalize(g[..., len(sizes) - 1 - d], sizes[d], align_corners) for d in range(len(sizes))]
    if mode == "bicubic":
        # the taps are read with the padding applied to each of them, from the unpadded coordinate
        iy, ix = coords[0].floor(), coords[1].floor()
        wy, wx = _cubic_weights(coords[0] - iy), _cubic_weights(coords[1] - ix)
        out = None
        for a in range(4):
            for b in range(4):
                cy = _pad_coord(iy + (a - 1), sizes[0], padding_mode, align_corners)
                cx = _pad_coord(ix + (b - 1), sizes[1], padding_mode, align_corners)
                term = _gather(flat, [cy, cx], sizes, padding_mode) * (wy[a] * wx[b]).unsqueeze(1)
                out = term if out is None else out + term
    else:
        coords = [_pad_coord(x, s, padding_mode, align_corners) for x, s in zip(coords, sizes)]
        if mode == "nearest":
            out = _gather(flat, [x.round() for x in coords], sizes, padding_mode)
        else:
            lows = [x.floor() for x in coords]
            fracs = [x - lo for x, lo in zip(coords, lows)]
            out = None
            for corner in range(1 << len(sizes)):
                at, w = [], None
                for d in range(len(sizes)):
                    hi = (corner >> (len(sizes) - 1 - d)) & 1
                    at.append(lows[d] + hi)
                    wd = fracs[d] if hi else 1 - fracs[d]
                    w = wd if w is None else w * wd
                term = _gather(flat, at, sizes, padding_mode) * w.unsqueeze(1)
                out = term if out is None else out + term
    return out.reshape([n, c] + out_spatial)




def _grid_sample_bilinear2d_meta(input, grid, padding_mode, align_corners):
    grid_sampler_checks(input, grid, "bilinear")
    if input.dim() != 4:
        raise RuntimeError(f"nn_grid_sample_bilinear2d: expected 4-D input, got {fmt_shape(input.shape)}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise RuntimeError(f"nn_grid_sample_bilinear2d: bad padding_mode {padding_mode!r}")
    return (input.shape[0], input.shape[1], grid.shape[1], grid.shape[2]), input.dtype


def _grid_sample_bilinear2d_backward_meta(grad_output, input, grid, padding_mode, align_corners):
    shape, _ = _grid_sample_bilinear2d_meta(input, grid, padding_mode, align_corners)
    if tuple(grad_output.shape) != shape:
        raise RuntimeError(f"nn_grid_sample_bilinear2d_backward: expected grad_output of size {fmt_shape(shape)}, "
                           f"got {fmt_shape(grad_output.shape)}")
    return [(tuple(input.shape), input.dtype), (tuple(grid.shape), grid.dtype)]


def _grid_sample_bilinear2d_composite(input: Tensor, grid: Tensor, padding_mode: str, align_corners: bool) -> Tensor:
    return grid_sample_composite(input, grid, "bilinear", padding_mode, bool(align_corners))


def _grid_sample_bilinear2d_backward_composite(grad_output: Tensor, input: Tensor, grid: Tensor, padding_mode: str,
                                               align_corners: bool) -> tuple[Tensor, Tensor]:
    """The gradients of the composite, by differentiating it (flambeau-nn depends on core-autograd)."""
    from flambeau.autograd import grad as autograd_grad

    with fb.enable_grad():
        x = input.detach().requires_grad_()
        g = grid.detach().requires_grad_()
        out = grid_sample_composite(x, g, "bilinear", padding_mode, bool(align_corners))
        gx, gg = autograd_grad(out, (x, g), grad_output, allow_unused=True)
    return (gx if gx is not None else fb.zeros_like(input), gg if gg is not None else fb.zeros_like(grid))


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    return [
        OpDecl("nn_resample", "(input: Tensor, index: Tensor, weight: Tensor, taps)", _resample_meta,
               composite=_resample_composite,
               doc="Separable resampling of the last ``len(taps)`` dims: each output position a weighted sum of "
                   "its taps (``index``, ``weight``); the engine of ``F.interpolate``.", **common),
        OpDecl("nn_resample_backward", "(grad_output: Tensor, index: Tensor, weight: Tensor, input_size, taps)",
               _resample_backward_meta, composite=_resample_backward_composite,
               doc="The input gradient of ``nn_resample``.", **common),
        OpDecl("nn_grid_sample_bilinear2d", "(input: Tensor, grid: Tensor, padding_mode, align_corners)",
               _grid_sample_bilinear2d_meta, composite=_grid_sample_bilinear2d_composite,
               doc="``F.grid_sample`` of a 4-D input, bilinear (``padding_mode``: zeros, border or reflection).",
               **common),
        OpDecl("nn_grid_sample_bilinear2d_backward", "(grad_output: Tensor, input: Tensor, grid: Tensor, padding_mode, "
               "align_corners)", _grid_sample_bilinear2d_backward_meta,
               composite=_grid_sample_bilinear2d_backward_composite, output_names=("grad_input", "grad_grid"),
               differentiable=False, doc="The input and grid gradients of ``nn_grid_sample_bilinear2d``.", **common),
    ]


def out_size(in_size: int, scale: float) -> int:
    """PyTorch's output size for a scale factor: ``floor(in_size * scale)``."""
    return int(math.floor(float(in_size * scale)))

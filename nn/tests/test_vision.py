"""Vision: pixel/channel shuffle, F.interpolate and Upsample, grid_sample and affine_grid.

References are written out in numpy from PyTorch's documented index maths, one output element at
a time: the source coordinate of output ``o`` is ``o * scale`` (align_corners, with
``scale = (in - 1) / (out - 1)``) or ``(o + 0.5) * scale - 0.5`` (half-pixel, ``scale = in / out``
or ``1 / scale_factor``); nearest reads ``floor(o * scale)``, nearest-exact
``floor((o + 0.5) * scale)``; area averages ``[floor(o * in / out), ceil((o + 1) * in / out))``.
Every multi-dim mode is the product of its 1-D rule along each dim, so the references apply the
1-D rule dim by dim. The CPU backend runs the kernels; the composites (every other backend) are
checked against them.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._ops import vision as V

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


# -- the 1-D rules, written out --------------------------------------------------------------------

def cubic(x, a=-0.75):
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def rule_1d(mode, n, m, align_corners=False, scale_factor=None):
    """A list, per output position, of (input position, weight) pairs."""
    rows = []
    for o in range(m):
        if mode in ("nearest", "nearest-exact"):
            s = 1 / scale_factor if scale_factor else n / m
            shift = 0.5 if mode == "nearest-exact" else 0.0
            rows.append([(min(math.floor((o + shift) * s), n - 1), 1.0)])
        elif mode == "area":
            lo, hi = (o * n) // m, -(-((o + 1) * n) // m)
            rows.append([(i, 1 / (hi - lo)) for i in range(lo, hi)])
        else:
            if align_corners:
                s = (n - 1) / (m - 1) if m > 1 else 0.0
                src = o * s
            else:
                s = 1 / scale_factor if scale_factor else n / m
                src = (o + 0.5) * s - 0.5
            if mode == "bicubic":
                i0 = math.floor(src)
                frac = src - i0
                rows.append([(min(max(i0 + j, 0), n - 1), cubic(frac - j)) for j in (-1, 0, 1, 2)])
            else:
                src = max(src, 0.0)
                i0 = min(math.floor(src), n - 1)
                i1 = i0 + 1 if i0 < n - 1 else i0
                lam = src - i0
                rows.append([(i0, 1 - lam), (i1, lam)])
    return rows


def apply_rule(x, axis, rows):
    out = np.zeros(x.shape[:axis] + (len(rows),) + x.shape[axis + 1:])
    for o, taps in enumerate(rows):
        for i, w in taps:
            idx = [slice(None)] * x.ndim
            idx[axis] = o
            src = [slice(None)] * x.ndim
            src[axis] = i
            out[tuple(idx)] += w * x[tuple(src)]
    return out


def ref_interpolate(x, out_sizes, mode, align_corners=False, scale_factors=None):
    k = len(out_sizes)
    for d in range(k):
        sf = scale_factors[d] if scale_factors else None
        x = apply_rule(x, x.ndim - k + d, rule_1d(mode, x.shape[x.ndim - k + d], out_sizes[d], align_corners, sf))
    return x


# -- pixel and channel shuffle -----------------------------------------------------------------------

def test_pixel_shuffle_matches_definition():
    r = 3
    x = RNG.standard_normal((2, 2 * r * r, 4, 5))
    got = F.pixel_shuffle(t(x), r).numpy()
    assert got.shape == (2, 2, 12, 15)
    for c in range(2):
        for h in range(12):
            for w in range(15):
                assert got[:, c, h, w].tolist() == x[:, c * r * r + (h % r) * r + w % r, h // r, w // r].tolist()
    back = F.pixel_unshuffle(t(got), r).numpy()
    np.testing.assert_array_equal(back, x)
    # extra leading dims and unbatched input
    y = RNG.standard_normal((3, 2, 8, 2, 3))
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(t(y), 2), 2).numpy(), y)
    np.testing.assert_array_equal(F.pixel_shuffle(t(y[0, 0]), 2).numpy(), F.pixel_shuffle(t(y), 2).numpy()[0, 0])


def test_channel_shuffle_matches_definition():
    x = RNG.standard_normal((2, 6, 3, 2))
    got = F.channel_shuffle(t(x), 3).numpy()
    for c in range(6):  # output channel c = (k, g) reads input channel g * 2 + k
        k, g = divmod(c, 3)
        np.testing.assert_array_equal(got[:, c], x[:, g * 2 + k])
    np.testing.assert_array_equal(F.native_channel_shuffle(t(x), 3).numpy(), got)


def test_shuffle_gradcheck():
    x = t(RNG.standard_normal((1, 8, 2, 3)), requires_grad=True)
    assert gradcheck(lambda v: F.pixel_shuffle(v, 2), (x,))
    assert gradcheck(lambda v: F.pixel_unshuffle(v, 2), (t(RNG.standard_normal((1, 2, 4, 6)), requires_grad=True),))
    assert gradcheck(lambda v: F.channel_shuffle(v, 2), (x,))


def test_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=5 is not divisible by 4"):
        F.pixel_shuffle(t(np.zeros((1, 5, 2, 2))), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions, but got input with 2 dimension"):
        F.pixel_shuffle(t(np.zeros((4, 2))), 2)
    with pytest.raises(RuntimeError, match="expects a positive upscale_factor, but got 0"):
        F.pixel_shuffle(t(np.zeros((1, 4, 2, 2))), 0)
    with pytest.raises(RuntimeError, match=r"height to be divisible by downscale_factor, but input.size\(-2\)=3"):
        F.pixel_unshuffle(t(np.zeros((1, 1, 3, 4))), 2)
    with pytest.raises(RuntimeError, match=r"width to be divisible by downscale_factor, but input.size\(-1\)=5"):
        F.pixel_unshuffle(t(np.zeros((1, 1, 4, 5))), 2)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 5 channels and 2"):
        F.channel_shuffle(t(np.zeros((1, 5, 2))), 2)
    with pytest.raises(RuntimeError, match=r"channel_shuffle expects input with > 2 dims, but got input with sizes "
                                           r"\[1, 4\]"):
        F.channel_shuffle(t(np.zeros((1, 4))), 2)


def test_shuffle_modules():
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert repr(nn.ChannelShuffle(4)) == "ChannelShuffle(groups=4)"
    x = t(RNG.standard_normal((1, 4, 2, 2)))
    np.testing.assert_array_equal(nn.PixelShuffle(2)(x).numpy(), F.pixel_shuffle(x, 2).numpy())
    np.testing.assert_array_equal(nn.ChannelShuffle(2)(x).numpy(), F.channel_shuffle(x, 2).numpy())


# -- interpolate -----------------------------------------------------------------------------------

MODE_CASES = [
    ("nearest", (2, 3, 7), (11,)),
    ("nearest", (1, 2, 5, 4), (3, 9)),
    ("nearest", (1, 2, 3, 4, 5), (5, 2, 7)),
    ("nearest-exact", (2, 3, 7), (11,)),
    ("nearest-exact", (1, 2, 5, 4), (3, 9)),
    ("nearest-exact", (1, 1, 3, 4, 5), (4, 6, 2)),
    ("linear", (2, 3, 7), (11,)),
    ("linear", (2, 3, 7), (3,)),
    ("bilinear", (1, 2, 5, 4), (3, 9)),
    ("bilinear", (2, 1, 6, 6), (12, 12)),
    ("bicubic", (1, 2, 5, 4), (3, 9)),
    ("bicubic", (1, 1, 4, 4), (8, 7)),
    ("trilinear", (1, 2, 3, 4, 5), (5, 2, 7)),
    ("area", (2, 3, 7), (3,)),
    ("area", (1, 2, 5, 7), (3, 4)),
    ("area", (1, 1, 6, 5, 4), (4, 3, 3)),
]


@pytest.mark.parametrize("mode,shape,size", MODE_CASES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_size_matches_reference(mode, shape, size, align_corners):
    if align_corners and mode in ("nearest", "nearest-exact", "area"):
        return
    x = RNG.standard_normal(shape)
    ac = align_corners if mode not in ("nearest", "nearest-exact", "area") else None
    got = F.interpolate(t(x), size=size, mode=mode, align_corners=ac)
    expected = ref_interpolate(x, size, mode, align_corners)
    assert tuple(got.shape) == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("factor", [2.0, 1.7, (0.6, 2.5)])
@pytest.mark.parametrize("recompute", [None, True])
def test_interpolate_scale_factor(mode, factor, recompute):
    x = RNG.standard_normal((1, 2, 5, 6))
    factors = factor if isinstance(factor, tuple) else (factor, factor)
    sizes = [math.floor(n * f) for n, f in zip(x.shape[2:], factors)]
    got = F.interpolate(t(x), scale_factor=factor, mode=mode, recompute_scale_factor=recompute)
    # with the scale kept, the source index uses 1 / scale_factor; recomputed, in / out
    expected = ref_interpolate(x, sizes, mode, False, None if recompute else factors)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_nearest_scale_factor_differs_from_size_ratio():
    # 1 / 1.7 vs 5 / 8: output 5 reads floor(5 / 1.7) = 2 with the factor, floor(5 * 5 / 8) = 3 recomputed
    x = t(np.arange(5.0).reshape(1, 1, 5))
    assert F.interpolate(x, scale_factor=1.7).numpy()[0, 0].tolist() == [0, 0, 1, 1, 2, 2, 3, 4]
    assert F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True).numpy()[0, 0].tolist() == \
        [0, 0, 1, 1, 2, 3, 3, 4]


@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float16, 2e-2), (fb.bfloat16, 5e-2)])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_interpolate_dtypes(dtype, tol, mode):
    x = RNG.standard_normal((1, 2, 5, 6))
    got = F.interpolate(t(x, dtype), size=(7, 4), mode=mode)
    assert got.dtype == dtype
    expected = ref_interpolate(t(x, dtype).to(fb.float64).numpy(), (7, 4), mode)
    np.testing.assert_allclose(got.to(fb.float64).numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [fb.uint8, fb.int64])
def test_interpolate_nearest_integers(dtype):
    x = RNG.integers(0, 200, (1, 2, 3, 4))
    got = F.interpolate(t(x, dtype), size=(5, 7), mode="nearest")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), ref_interpolate(x.astype(np.float64), (5, 7), "nearest"))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.interpolate(t(x, dtype), size=(5, 7), mode="bilinear")


def test_interpolate_non_contiguous():
    x = RNG.standard_normal((5, 6, 2, 1))
    xt = t(x).permute(3, 2, 0, 1)
    got = F.interpolate(xt, size=(3, 9), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(got.numpy(), ref_interpolate(x.transpose(3, 2, 0, 1), (3, 9), "bilinear", True),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode,shape,size", [m for m in MODE_CASES if m[0] != "nearest"][::2] +
                         [("nearest", (1, 2, 5, 4), (3, 9))])
def test_interpolate_gradcheck(mode, shape, size):
    x = t(RNG.standard_normal((1, 1) + shape[2:]), requires_grad=True)
    ac = True if mode in ("linear", "bilinear", "bicubic", "trilinear") else None
    fn = lambda v: F.interpolate(v, size=size, mode=mode, align_corners=ac)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_resample_composite_matches_kernel():
    decl = {d.name: d for d in V.declarations()}
    for mode, shape, size in MODE_CASES:
        x = t(RNG.standard_normal(shape))
        index, weight, layout = V.resample_plan(mode, shape[2:], size, False, [None] * len(size))
        it, wt = t(index, fb.int64), t(weight)
        kernel = fb.ops.function("nn_resample")(x, it, wt, layout)
        np.testing.assert_allclose(decl["nn_resample"].composite(x, it, wt, layout).numpy(), kernel.numpy(),
                                   rtol=1e-12, atol=1e-12)
        g = t(RNG.standard_normal(tuple(kernel.shape)))
        back = fb.ops.function("nn_resample_backward")(g, it, wt, shape, layout)
        np.testing.assert_allclose(decl["nn_resample_backward"].composite(g, it, wt, shape, layout).numpy(),
                                   back.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_interpolate_property(data):
    mode = data.draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear",
                                      "area"]))
    k = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode) or data.draw(st.integers(1, 3))
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))) + tuple(
        data.draw(st.integers(1, 6)) for _ in range(k))
    size = tuple(data.draw(st.integers(1, 9)) for _ in range(k))
    ac = data.draw(st.booleans()) if mode in ("linear", "bilinear", "bicubic", "trilinear") else None
    x = RNG.standard_normal(shape)
    got = F.interpolate(t(x), size=size, mode=mode, align_corners=ac)
    np.testing.assert_allclose(got.numpy(), ref_interpolate(x, size, mode, bool(ac)), rtol=1e-10, atol=1e-10)


def lanczos3(x):
    return float(np.sinc(x) * np.sinc(x / 3)) if abs(x) < 3 else 0.0


def aa_weights(n, m, filt):
    """PIL-style antialias taps written out: the filter stretched by in/out, normalized per output."""
    s = n / m
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[filt] * max(s, 1.0)
    rows = []
    for o in range(m):
        center = s * (o + 0.5)
        lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n)
        ws = []
        for i in range(lo, hi):
            u = (i - center + 0.5) / max(s, 1.0)
            if filt == "bicubic":
                ws.append(cubic(u, -0.5))
            elif filt == "lanczos":
                ws.append(lanczos3(u))
            else:
                ws.append(max(0.0, 1 - abs(u)))
        total = sum(ws)
        rows.append([(lo + j, w / total) for j, w in enumerate(ws)])
    return rows


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("size", [(3, 2), (5, 7), (12, 4)])
def test_interpolate_antialias(mode, size):
    x = RNG.standard_normal((1, 2, 9, 8))
    got = F.interpolate(t(x), size=size, mode=mode, antialias=True)
    expected = x
    for d, m in enumerate(size):
        expected = apply_rule(expected, 2 + d, aa_weights(x.shape[2 + d], m, mode))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda v: F.interpolate(v, size=size, mode=mode, antialias=True),
                     (t(x[:1, :1], requires_grad=True),))


def test_interpolate_errors():
    x = t(np.zeros((1, 1, 4, 4)))
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match=r"spatial dimensions of \[4, 4\] and output size of \(2,\)"):
        F.interpolate(x, size=(2,))
    with pytest.raises(ValueError, match=r"scale_factor of shape \(2.0, 2.0, 2.0\)"):
        F.interpolate(x, scale_factor=(2.0, 2.0, 2.0))
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=2, mode="linear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 2D\)"):
        F.interpolate(t(np.zeros((4, 4))), size=2)
    with pytest.raises(NotImplementedError, match=r"\(got cubic\)"):
        F.interpolate(x, size=2, mode="cubic")
    with pytest.raises(NotImplementedError, match=r"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                                  r"\(got 3D\)"):
        F.interpolate(t(np.zeros((1, 1, 4))), size=2, mode="bicubic")
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(x, size=2, mode="lanczos")
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        F.interpolate(x, size=2, mode="lanczos", antialias=True, align_corners=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"):
        F.interpolate(x, size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful with an explicit size."):
        F.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(RuntimeError, match=r"Input and output sizes should be greater than 0, but got input "
                                           r"\(H: 4, W: 4\) output \(H: 0, W: 0\)"):
        F.interpolate(x, scale_factor=0.1)


def test_upsample_modules_and_deprecated_forms():
    assert repr(nn.Upsample(scale_factor=2, mode="bilinear")) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    assert repr(nn.Upsample(scale_factor=(2, 3))) == "Upsample(scale_factor=(2.0, 3.0), mode='nearest')"
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    assert repr(nn.UpsamplingBilinear2d(size=5)) == "UpsamplingBilinear2d(size=5, mode='bilinear')"
    x = RNG.standard_normal((1, 2, 3, 4))
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(scale_factor=2)(t(x)).numpy(),
                               ref_interpolate(x, (6, 8), "bilinear", True), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(nn.UpsamplingNearest2d(size=(5, 5))(t(x)).numpy(),
                                  ref_interpolate(x, (5, 5), "nearest"))
    m = nn.Upsample(scale_factor=1.5, mode="bicubic", align_corners=True)
    np.testing.assert_allclose(m(t(x)).numpy(), ref_interpolate(x, (4, 6), "bicubic", True), rtol=1e-12, atol=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = F.upsample(t(x), scale_factor=2)
        b = F.upsample_nearest(t(x), scale_factor=2)
        c = F.upsample_bilinear(t(x), scale_factor=2)
    assert sum("deprecated" in str(w.message) for w in caught) == 3
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(c.numpy(), ref_interpolate(x, (6, 8), "bilinear", True), rtol=1e-12, atol=1e-12)


# -- grid_sample and affine_grid ----------------------------------------------------------------------

def _unnorm(c, n, ac):
    return (c + 1) / 2 * (n - 1) if ac else ((c + 1) * n - 1) / 2


def _reflect(x, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = abs(x - lo)
    extra = math.fmod(x, span)
    flips = math.floor(x / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _pad(x, n, padding_mode, ac):
    if padding_mode == "border":
        return min(max(x, 0), n - 1)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if ac else _reflect(x, -1, 2 * n - 1)
        return min(max(x, 0), n - 1)
    return x


def ref_grid_sample_2d(x, grid, mode, padding_mode, ac):
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def read(b, yy, xx):
        if 0 <= yy < h and 0 <= xx < w:
            return x[b, :, yy, xx]
        return np.zeros(c)

    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                gx, gy = _unnorm(grid[b, i, j, 0], w, ac), _unnorm(grid[b, i, j, 1], h, ac)
                if mode == "bicubic":
                    x0, y0 = math.floor(gx), math.floor(gy)
                    tx, ty = gx - x0, gy - y0
                    for a in range(4):
                        for e in range(4):
                            yy = _pad(y0 - 1 + a, h, padding_mode, ac)
                            xx = _pad(x0 - 1 + e, w, padding_mode, ac)
                            out[b, :, i, j] += cubic(ty - (a - 1)) * cubic(tx - (e - 1)) * read(b, int(yy), int(xx))
                    continue
                gx, gy = _pad(gx, w, padding_mode, ac), _pad(gy, h, padding_mode, ac)
                if mode == "nearest":
                    out[b, :, i, j] = read(b, int(np.round(gy)), int(np.round(gx)))
                    continue
                x0, y0 = math.floor(gx), math.floor(gy)
                for yy, wy in ((y0, 1 - (gy - y0)), (y0 + 1, gy - y0)):
                    for xx, wx in ((x0, 1 - (gx - x0)), (x0 + 1, gx - x0)):
                        out[b, :, i, j] += wy * wx * read(b, yy, xx)
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_reference(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 4, 5))
    grid = RNG.uniform(-1.6, 1.6, (2, 3, 4, 2))
    got = F.grid_sample(t(x), t(grid), mode, padding_mode, align_corners)
    expected = ref_grid_sample_2d(x, grid, mode, padding_mode, align_corners)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_grid_sample_3d_matches_2d_on_a_flat_volume():
    # a depth-1 volume sampled at z = 0 (align_corners: the only slice) is the 2-D sample
    x = RNG.standard_normal((1, 2, 1, 4, 5))
    grid2 = RNG.uniform(-1, 1, (1, 3, 4, 2))
    grid3 = np.concatenate([grid2, np.zeros((1, 3, 4, 1))], axis=-1)[:, None]
    for mode in ("bilinear", "nearest"):
        got = F.grid_sample(t(x), t(grid3), mode, "border", True)
        expected = ref_grid_sample_2d(x[:, :, 0], grid2, mode, "border", True)
        np.testing.assert_allclose(got.numpy()[:, :, 0], expected, rtol=1e-10, atol=1e-10)


def test_grid_sample_identity_with_affine_grid():
    x = RNG.standard_normal((2, 3, 4, 5))
    theta = t(np.tile(np.array([[1.0, 0, 0], [0, 1, 0]]), (2, 1, 1)))
    for ac in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=ac)
        np.testing.assert_allclose(F.grid_sample(t(x), grid, align_corners=ac).numpy(), x, rtol=1e-12, atol=1e-12)
    x3 = RNG.standard_normal((1, 2, 3, 4, 2))
    theta3 = t(np.eye(4)[:3][None])
    grid3 = F.affine_grid(theta3, (1, 2, 3, 4, 2), align_corners=False)
    assert tuple(grid3.shape) == (1, 3, 4, 2, 3)
    np.testing.assert_allclose(F.grid_sample(t(x3), grid3).numpy(), x3, rtol=1e-12, atol=1e-12)


def test_affine_grid_matches_definition():
    theta = RNG.standard_normal((2, 2, 3))
    for ac in (False, True):
        grid = F.affine_grid(t(theta), (2, 1, 3, 4), align_corners=ac).numpy()
        xs = np.linspace(-1, 1, 4) * (1 if ac else 3 / 4)
        ys = np.linspace(-1, 1, 3) * (1 if ac else 2 / 3)
        for b in range(2):
            for i in range(3):
                for j in range(4):
                    np.testing.assert_allclose(grid[b, i, j], theta[b] @ np.array([xs[j], ys[i], 1.0]), atol=1e-12)


def test_grid_sample_and_affine_grid_gradcheck():
    x = t(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = t(RNG.uniform(-0.9, 0.9, (1, 2, 3, 2)), requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        for padding_mode in ("zeros", "border", "reflection"):
            assert gradcheck(lambda a, g, m=mode, p=padding_mode: F.grid_sample(a, g, m, p, False), (x, grid))
    x3 = t(RNG.standard_normal((1, 1, 2, 3, 3)), requires_grad=True)
    grid3 = t(RNG.uniform(-0.9, 0.9, (1, 2, 2, 1, 3)), requires_grad=True)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, align_corners=True), (x3, grid3))
    theta = t(RNG.standard_normal((2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda th: F.affine_grid(th, (2, 1, 3, 4)), (theta,))


def test_grid_sample_errors():
    x = t(np.zeros((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'"):
        F.grid_sample(x, t(np.zeros((1, 2, 2, 2))), mode="area")
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
        F.grid_sample(x, t(np.zeros((1, 2, 2, 2))), padding_mode="wrap")
    with pytest.raises(RuntimeError, match=r"expected grid and input to have same batch size, but got input with "
                                           r"sizes \[1, 1, 3, 3\] and grid with sizes \[2, 2, 2, 2\]"):
        F.grid_sample(x, t(np.zeros((2, 2, 2, 2))))
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        F.grid_sample(x, t(np.zeros((1, 2, 2, 3))))
    with pytest.raises(RuntimeError, match="expected 4D or 5D input and grid with same number of dimensions"):
        F.grid_sample(x, t(np.zeros((1, 2, 2, 2, 3))))
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(t(np.zeros((1, 1, 2, 2, 2))), t(np.zeros((1, 1, 1, 1, 3))), mode="bicubic")
    with pytest.raises(RuntimeError, match="with dimension 3 being empty"):
        F.grid_sample(t(np.zeros((1, 1, 3, 0))), t(np.zeros((1, 2, 2, 2))))
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                                         r"\[1, 1, 2, 2\]. Got \[1, 3, 4\]."):
        F.affine_grid(t(np.zeros((1, 3, 4))), (1, 1, 2, 2))
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(t(np.zeros((1, 2, 3))), (1, 1, 2))
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(t(np.zeros((1, 2, 3))), (1, 1, 0, 2))
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(t(np.zeros((1, 2, 3)), fb.int64), (1, 1, 2, 2))


def test_grid_sample_non_finite_grid():
    # As PyTorch: border and reflection clip a NaN coordinate to 0 and +inf to the last pixel (reflection
    # sends every non-finite one to 0); with zeros padding, a non-finite coordinate reads nothing, and
    # the bilinear/bicubic weights carry the NaN into the result.
    x = t(np.arange(1.0, 13.0).reshape(1, 1, 3, 4))
    nan, inf = float("nan"), float("inf")
    for v, border in ((nan, [6.2, 3.1, 1.0]), (inf, [9.2, 11.1, 12.0]), (-inf, [6.2, 3.1, 1.0])):
        grid = t([[[[v, 0.2], [0.3, v], [v, v]]]])
        got = {(m, p): F.grid_sample(x, grid, m, p, False).numpy().ravel()
               for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")}
        np.testing.assert_allclose(got["bilinear", "border"], border, rtol=1e-12)
        np.testing.assert_allclose(got["bilinear", "reflection"], [6.2, 3.1, 1.0], rtol=1e-12)
        assert np.isnan(got["bilinear", "zeros"]).all() and np.isnan(got["bicubic", "border"]).all()
        assert got["nearest", "zeros"].tolist() == [0, 0, 0]
        assert got["nearest", "reflection"].tolist() == [5, 3, 1]


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bilinear_kernel_matches_composite(padding_mode, align_corners):
    decl = {d.name: d for d in V.declarations()}
    x = t(RNG.standard_normal((2, 3, 5, 4)))
    grid = t(RNG.uniform(-1.4, 1.4, (2, 3, 6, 2)))
    kernel = fb.ops.function("nn_grid_sample_bilinear2d")(x, grid, padding_mode, align_corners)
    composite = decl["nn_grid_sample_bilinear2d"].composite(x, grid, padding_mode, align_corners)
    np.testing.assert_allclose(kernel.numpy(), composite.numpy(), rtol=1e-12, atol=1e-12)
    g = t(RNG.standard_normal(tuple(kernel.shape)))
    back = fb.ops.function("nn_grid_sample_bilinear2d_backward")(g, x, grid, padding_mode, align_corners)
    ref = decl["nn_grid_sample_bilinear2d_backward"].composite(g, x, grid, padding_mode, align_corners)
    for a, b in zip(back, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)

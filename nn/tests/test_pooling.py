"""Pooling: max, average, adaptive, fractional, LP pooling and max unpooling.

References are written out in numpy (flambeau.nn._conformance_pooling: loops over output positions
and windows). The CPU backend runs the C++ kernels (csrc/nn_pooling.cpp); the composites
(``_pool_math``), which every other backend runs, are checked against the same references.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._conformance_pooling import (ref_adaptive_avg_pool, ref_adaptive_max_pool, ref_avg_pool,
                                              ref_max_pool, ref_max_unpool, ref_out_size)
from flambeau.nn._ops import _pool_math as M

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def distinct(shape, scale=1.0):
    """Values with no ties (a permutation, jittered), so that max pooling's gradient is defined."""
    n = math.prod(shape)
    return (RNG.permutation(n).astype(np.float64) + RNG.uniform(0.1, 0.4, n)).reshape(shape) * scale / max(n, 1)


# -- max pooling ---------------------------------------------------------------------------------------

MAX_CASES = [
    # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), (1, 1), True),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 1), (1, 1), False),
    ((1, 2, 9, 8), (3, 3), (2, 3), (1, 0), (2, 1), True),
    ((2, 2, 11), (4,), (3,), (2,), (1,), True),
    ((1, 3, 10), (3,), (1,), (0,), (3,), False),
    ((1, 2, 5, 4, 6), (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2), True),
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", MAX_CASES)
@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-6), (fb.float64, 0)])
def test_max_pool_forward(shape, k, s, p, d, ceil, dtype, tol):
    x = RNG.standard_normal(shape)
    x = x.astype(np.float32).astype(np.float64) if dtype == fb.float32 else x
    values, indices = ref_max_pool(x, k, s, p, d, ceil)
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[len(k) - 1]
    got, got_i = fn(t(x, dtype), k, s, p, d, ceil_mode=ceil, return_indices=True)
    assert got.dtype == dtype and got_i.dtype == fb.int64
    np.testing.assert_allclose(got.numpy(), values, rtol=tol, atol=tol)
    np.testing.assert_array_equal(got_i.numpy(), indices)
    # the composite every other backend runs agrees
    cv, ci = M.max_pool(t(x, dtype), k, s, p, d, ceil)
    np.testing.assert_allclose(cv.numpy(), values, rtol=tol, atol=tol)
    np.testing.assert_array_equal(ci.numpy(), indices)


@pytest.mark.parametrize("shape,k,s,p,d,ceil", MAX_CASES)
def test_max_pool_gradcheck(shape, k, s, p, d, ceil):
    x = t(distinct(shape), requires_grad=True)
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[len(k) - 1]
    assert gradcheck(lambda a: fn(a, k, s, p, d, ceil_mode=ceil), (x,))


def test_max_pool_double_backward():
    x = t(distinct((1, 2, 6, 6)), requires_grad=True)
    assert gradgradcheck(lambda a: F.max_pool2d(a, 3, 2, 1), (x,))


def test_max_pool_backward_adds_over_overlapping_windows():
    x = t([[[[0.0, 0.0, 1.0, 0.0, 0.0]]]], requires_grad=True)
    F.max_pool2d(x, (1, 3), 1).sum().backward()  # all three windows hold the 1
    np.testing.assert_array_equal(x.grad.numpy(), [[[[0, 0, 3, 0, 0]]]])


def test_max_pool_nan_is_the_max():
    x = np.array([[[1.0, np.nan, 3.0, 2.0, np.nan, np.nan]]])
    values, indices = F.max_pool1d(t(x), 2, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), [[[np.nan, 3.0, np.nan]]])
    np.testing.assert_array_equal(indices.numpy(), [[[1, 2, 5]]])  # the last NaN of a window, as PyTorch's CPU


def test_max_pool_fast_path_matches_reference_on_ties_and_infinities():
    # MaxPool2d(2) has its own kernel: the same order of comparisons as the general one.
    x = np.array([[[[1.0, 1.0, -np.inf, -np.inf, 2.0, np.nan],
                    [1.0, 0.0, -np.inf, -np.inf, np.nan, 2.0]]]])
    values, indices = F.max_pool2d(t(x), 2, return_indices=True)
    ref_v, ref_i = ref_max_pool(x, (2, 2), (2, 2), (0, 0), (1, 1))
    np.testing.assert_array_equal(values.numpy(), ref_v)
    np.testing.assert_array_equal(indices.numpy(), ref_i)
    np.testing.assert_array_equal(indices.numpy(), [[[[0, 2, 10]]]])


@pytest.mark.parametrize("width", [16, 40, 67])
def test_max_pool_fast_path_vector_lanes_on_ties_and_nan(width):
    # rows wide enough for the 2x2 kernel's vectorised loop (and its scalar tail at odd widths)
    rng = np.random.default_rng(width)
    x = rng.integers(0, 3, (2, 3, 6, width)).astype(np.float64)  # many ties
    x[rng.random(x.shape) < 0.1] = np.nan
    x[rng.random(x.shape) < 0.05] = -np.inf
    for dtype in (fb.float32, fb.float64):
        values, indices = F.max_pool2d(t(x).to(dtype), 2, return_indices=True)
        ref_v, ref_i = ref_max_pool(x, (2, 2), (2, 2), (0, 0), (1, 1))
        np.testing.assert_array_equal(values.double().numpy(), ref_v)
        np.testing.assert_array_equal(indices.numpy(), ref_i)


@pytest.mark.parametrize("size,k,s,p,expected", [
    (5, 2, 2, 0, 3),   # a partial last window
    (4, 2, 2, 0, 2),   # ceil and floor agree
    (5, 3, 3, 1, 2),   # the third window would start in the right padding: dropped
    (6, 3, 2, 1, 4),   # the fourth window starts at 5, inside the input: kept
])
def test_ceil_mode_output_sizes(size, k, s, p, expected):
    x = t(RNG.standard_normal((1, 1, size)))
    assert F.max_pool1d(x, k, s, p, ceil_mode=True).shape == (1, 1, expected)
    assert F.avg_pool1d(x, k, s, p, ceil_mode=True).shape == (1, 1, expected)
    assert ref_out_size(size, k, s, p, 1, True) == expected


def test_max_pool_unbatched_and_noncontiguous():
    x = RNG.standard_normal((3, 6, 8))
    got = F.max_pool2d(t(x), 2)
    assert got.shape == (3, 3, 4)
    np.testing.assert_array_equal(got.numpy(), ref_max_pool(x[None], (2, 2), (2, 2), (0, 0), (1, 1))[0][0])
    xt = t(x).transpose(1, 2)  # (3, 8, 6), strided
    np.testing.assert_array_equal(F.max_pool2d(xt, 2).numpy(),
                                  ref_max_pool(np.swapaxes(x, 1, 2)[None], (2, 2), (2, 2), (0, 0), (1, 1))[0][0])


@pytest.mark.parametrize("dtype", [fb.float16, fb.bfloat16])
def test_pooling_half_dtypes(dtype):
    x = t(RNG.standard_normal((2, 3, 6, 6)), fb.float32).to(dtype)
    x64 = x.to(fb.float64).numpy()
    got = F.max_pool2d(x, 2)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.to(fb.float64).numpy(), ref_max_pool(x64, (2, 2), (2, 2), (0, 0), (1, 1))[0])
    avg = F.avg_pool2d(x, 3, 1, 1)
    assert avg.dtype == dtype
    np.testing.assert_allclose(avg.to(fb.float64).numpy(), ref_avg_pool(x64, (3, 3), (1, 1), (1, 1)), rtol=2e-2,
                               atol=2e-2)


# -- errors --------------------------------------------------------------------------------------------

def test_max_pool_errors():
    # PyTorch's messages, in its order of checks
    x = t(RNG.standard_normal((3, 2, 2)))
    with pytest.raises(RuntimeError, match=r"Given input size: \(3x2x2\)\. Calculated output size: \(3x0x0\)\. "
                                           r"Output size is too small"):
        F.max_pool2d(x, 3)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size, but got pad=2, "
                                           "kernel_size=2 and dilation=1"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half of kernel size, but got "
                                           "padW = 2, padH = 2, kW = 2, kH = 2"):
        F.max_pool2d(t(RNG.standard_normal((1, 1, 9, 9))), 2, padding=2, dilation=3)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.max_pool2d(x, 0)
    with pytest.raises(RuntimeError, match=r"non-empty 3D or 4D \(batch mode\) tensor expected for input"):
        F.max_pool2d(t(RNG.standard_normal((4, 4))), 2)
    with pytest.raises(RuntimeError, match=r"non-empty 4D or 5D \(batch mode\) tensor expected for input"):
        F.max_pool3d(t(RNG.standard_normal((4, 4))), 2)
    with pytest.raises(RuntimeError, match=r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 "
                                           r"dim batch size for input, but got:\[1, 2, 4, 4\]"):
        F.max_pool1d(t(RNG.standard_normal((1, 2, 4, 4))), 2)
    with pytest.raises(RuntimeError, match="max_pool2d: kernel_size must either be a single int, or a tuple of two "
                                           "ints"):
        F.max_pool2d(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match="max_pool2d: stride must either be omitted, a single int, or a tuple of "
                                           "two ints"):
        F.max_pool2d(x, 2, (1, 1, 1))
    with pytest.raises(RuntimeError, match="max_pool2d: dilation must be either a single int, or a tuple of two ints"):
        F.max_pool2d(x, 2, 1, 0, (1, 1, 1))


def test_avg_pool_errors():
    x = t(RNG.standard_normal((1, 3, 4, 4)))
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.avg_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match=r"Calculated output size: \(3x0x0\)"):
        F.avg_pool2d(x, 5)


# -- average pooling -----------------------------------------------------------------------------------

AVG_CASES = [
    # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), False, True, None),
    ((1, 2, 7, 6), (3, 3), (2, 2), (1, 1), True, True, None),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 1), True, False, None),
    ((1, 2, 5, 5), (3, 3), (2, 2), (1, 0), False, True, 4),
    ((1, 2, 4, 4), (2, 2), (2, 2), (0, 0), False, True, -3),  # PyTorch refuses only a zero divisor
    ((2, 2, 11), (4,), (3,), (2,), True, False, None),
    ((1, 2, 5, 4, 6), (2, 3, 2), (2, 1, 2), (1, 1, 0), True, True, None),
    ((1, 2, 4, 5, 3), (3, 2, 2), (1, 2, 2), (1, 0, 1), False, False, 2),
]


def _avg(k, x, ks, s, p, ceil, cip, div):
    if k == 1:
        return F.avg_pool1d(x, ks, s, p, ceil, cip)
    return (F.avg_pool2d, F.avg_pool3d)[k - 2](x, ks, s, p, ceil, cip, div)


@pytest.mark.parametrize("shape,k,s,p,ceil,cip,div", AVG_CASES)
@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
def test_avg_pool_forward(shape, k, s, p, ceil, cip, div, dtype, tol):
    x = RNG.standard_normal(shape)
    expected = ref_avg_pool(x, k, s, p, ceil, cip, div)
    got = _avg(len(k), t(x, dtype), k, s, p, ceil, cip, div)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(M.avg_pool(t(x, dtype), k, s, p, ceil, cip, div).numpy(), expected, rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("shape,k,s,p,ceil,cip,div", AVG_CASES)
def test_avg_pool_gradcheck(shape, k, s, p, ceil, cip, div):
    x = t(RNG.standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda a: _avg(len(k), a, k, s, p, ceil, cip, div), (x,))


def test_avg_pool_double_backward_and_composite_backward():
    x = t(RNG.standard_normal((1, 2, 5, 6)), requires_grad=True)
    assert gradgradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1, True, False), (x,))
    g = RNG.standard_normal((1, 2, 3, 4))
    x.grad = None
    F.avg_pool2d(x, 3, 2, 1, True, False).backward(t(g))
    composite = M.avg_pool_backward(t(g), (5, 6), (3, 3), (2, 2), (1, 1), True, False, None)
    np.testing.assert_allclose(x.grad.numpy(), composite.numpy(), rtol=1e-12, atol=1e-12)


# -- adaptive pooling ----------------------------------------------------------------------------------

ADAPTIVE_CASES = [((2, 3, 7, 5), (3, 2)), ((1, 2, 10), (4,)), ((1, 2, 3, 4, 5), (2, 3, 1)), ((8, 4, 2, 2), (1, 1)),
                  ((1, 2, 3, 3), (5, 4)), ((1, 1, 6), (6,))]


@pytest.mark.parametrize("shape,out", ADAPTIVE_CASES)
@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
def test_adaptive_forward(shape, out, dtype, tol):
    x = RNG.standard_normal(shape)
    k = len(out)
    avg = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[k - 1]
    mx = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[k - 1]
    np.testing.assert_allclose(avg(t(x, dtype), out).numpy(), ref_adaptive_avg_pool(x, out), rtol=tol, atol=tol)
    values, indices = mx(t(x, dtype), out, return_indices=True)
    rv, ri = ref_adaptive_max_pool(x, out)
    np.testing.assert_allclose(values.numpy(), rv, rtol=tol, atol=tol)
    np.testing.assert_array_equal(indices.numpy(), ri)
    np.testing.assert_allclose(M.adaptive_avg_pool(t(x, dtype), out).numpy(), ref_adaptive_avg_pool(x, out),
                               rtol=tol, atol=tol)
    cv, ci = M.adaptive_max_pool(t(x, dtype), out)
    np.testing.assert_array_equal(ci.numpy(), ri)


@pytest.mark.parametrize("shape,out", ADAPTIVE_CASES)
def test_adaptive_gradcheck(shape, out):
    k = len(out)
    avg = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[k - 1]
    mx = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[k - 1]
    x = t(distinct(shape), requires_grad=True)
    assert gradcheck(lambda a: avg(a, out), (x,))
    assert gradcheck(lambda a: mx(a, out), (x,))
    assert gradgradcheck(lambda a: avg(a, out), (x,))


def test_adaptive_none_entries_and_unbatched():
    x = t(RNG.standard_normal((3, 7, 5)))
    assert F.adaptive_avg_pool2d(x, (None, 2)).shape == (3, 7, 2)
    assert F.adaptive_max_pool2d(x, (4, None)).shape == (3, 4, 5)
    assert nn.AdaptiveAvgPool2d((None, 3))(x).shape == (3, 7, 3)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(x, 1).numpy()[..., 0, 0], x.numpy().mean((1, 2)), rtol=1e-12)


def test_adaptive_errors():
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for "
                                           r"non-batch dimensions, but input has sizes \[1, 2, 0, 4\] with dimension 2 "
                                           r"being empty"):
        F.adaptive_avg_pool2d(t(np.zeros((1, 2, 0, 4))), 2)
    assert F.adaptive_avg_pool2d(t(np.zeros((1, 0, 4, 4))), 2).shape == (1, 0, 2, 2)  # no channels is fine
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[4, 4\]"):
        F.adaptive_avg_pool2d(t(np.zeros((4, 4))), 2)
    with pytest.raises(RuntimeError, match="elements of output_size must be greater than or equal to 0"):
        F.adaptive_avg_pool2d(t(np.zeros((1, 4, 4))), -1)


# -- max unpooling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_unpool_inverts_max_pool(k):
    shape = (2, 3) + (6, 5, 4)[:k]
    x = t(distinct(shape), requires_grad=True)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[k - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[k - 1]
    values, indices = pool(x, 2, return_indices=True)
    out = unpool(values, indices, 2, output_size=shape[2:])
    assert out.shape == shape
    np.testing.assert_array_equal(out.detach().numpy(), ref_max_unpool(values.detach().numpy(), indices.numpy(),
                                                                      shape[2:]))
    assert gradcheck(lambda v: unpool(v, indices, 2, output_size=shape[2:]), (values.detach().requires_grad_(),))


def test_max_unpool_default_size_and_errors():
    v4, i4 = F.max_pool2d(t(distinct((1, 1, 4, 4))), 2, return_indices=True)
    assert F.max_unpool2d(v4, i4, 2).shape == (1, 1, 4, 4)
    values, indices = F.max_pool2d(t(distinct((1, 1, 5, 5))), 2, return_indices=True)
    assert nn.MaxUnpool2d(2)(values, indices, output_size=(1, 1, 5, 5)).shape == (1, 1, 5, 5)
    with pytest.raises(ValueError, match=r'invalid output_size "\(7, 7\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(values, indices, 2, output_size=(7, 7))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 16 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(values, fb.full((1, 1, 2, 2), 16, dtype=fb.int64), 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: -1 \(output volumes are of size 4x1\)"):
        F.max_unpool1d(t([[[1.0, 2.0]]]), fb.tensor([[[0, -1]]]), 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Int"):
        F.max_unpool2d(values, indices.to(fb.int32), 2)
    with pytest.raises(RuntimeError, match="Input to max_unpooling2d should be a 3d or 4d Tensor"):
        F.max_unpool2d(values[0, 0], indices[0, 0], 2)


# -- LP and fractional pooling -------------------------------------------------------------------------

@pytest.mark.parametrize("k,norm", [(1, 2.0), (2, 3.0), (3, 1.5)])
def test_lp_pool(k, norm):
    shape = (1, 2) + (7, 6, 5)[:k]
    x = RNG.uniform(0.5, 2.0, shape)
    ks = (3, 2, 2)[:k]
    fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[k - 1]
    got = fn(t(x), norm, ks, 2)
    s = (2,) * k
    expected = (ref_avg_pool(x ** norm, ks, s, (0,) * k) * math.prod(ks)) ** (1 / norm)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda a: fn(a, norm, ks, 2), (t(x, requires_grad=True),))


def _ref_intervals(u, size, out, k):
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


@pytest.mark.parametrize("k", [2, 3])
def test_fractional_max_pool(k):
    shape = (2, 3) + (9, 8, 7)[:k]
    x = RNG.standard_normal(shape)
    ks = (2, 3, 2)[:k]
    out = (4, 3, 3)[:k]
    samples = RNG.uniform(0, 1, (2, 3, k))
    fn = F.fractional_max_pool2d if k == 2 else F.fractional_max_pool3d
    values, indices = fn(t(x), ks, output_size=out, return_indices=True, _random_samples=t(samples))
    order = (1, 0) if k == 2 else (0, 1, 2)  # 2-d samples are (width, height)
    for n, c in itertools.product(range(2), range(3)):
        starts = [_ref_intervals(samples[n, c, order[d]], shape[2 + d], out[d], ks[d]) for d in range(k)]
        for o in itertools.product(*(range(v) for v in out)):
            window = tuple(slice(starts[d][o[d]], starts[d][o[d]] + ks[d]) for d in range(k))
            block = x[(n, c) + window]
            assert values.numpy()[(n, c) + o] == block.max()
            pos = tuple(starts[d][o[d]] + j for d, j in enumerate(np.unravel_index(block.argmax(), block.shape)))
            assert indices.numpy()[(n, c) + o] == np.ravel_multi_index(pos, shape[2:])
    xd = t(distinct(shape), requires_grad=True)
    assert gradcheck(lambda a: fn(a, ks, output_size=out, _random_samples=t(samples)), (xd,))


def test_fractional_output_ratio_and_module():
    x = t(RNG.standard_normal((1, 2, 10, 8)))
    assert F.fractional_max_pool2d(x, 2, output_ratio=0.5).shape == (1, 2, 5, 4)
    m = nn.FractionalMaxPool2d(3, output_size=(4, 3))
    assert m(x).shape == (1, 2, 4, 3)
    assert m(x[0]).shape == (2, 4, 3)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(RuntimeError, match=r"fractional_max_pool2d\(\): pool height 3 too large relative to input "
                                           r"height 5"):
        F.fractional_max_pool2d(t(RNG.standard_normal((1, 1, 5, 5))), 3, output_size=4)
    with pytest.raises(RuntimeError, match=r"Expect _random_samples.size\(2\) equals to 2; got 3\."):
        F.fractional_max_pool2d(t(RNG.standard_normal((1, 1, 5, 5))), 2, output_size=2,
                                _random_samples=t(np.full((1, 1, 3), 0.5)))


# -- modules -------------------------------------------------------------------------------------------

def test_module_reprs():
    # PyTorch's reprs, verbatim
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool1d(3, 2, 1, ceil_mode=True)) == \
        "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"
    assert repr(nn.MaxPool3d((2, 3, 3))) == \
        "MaxPool3d(kernel_size=(2, 3, 3), stride=(2, 3, 3), padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AvgPool3d(2, 1)) == "AvgPool3d(kernel_size=2, stride=1, padding=0)"
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    assert repr(nn.AdaptiveAvgPool2d((None, 7))) == "AdaptiveAvgPool2d(output_size=(None, 7))"
    assert repr(nn.AdaptiveMaxPool1d(4)) == "AdaptiveMaxPool1d(output_size=4)"
    assert repr(nn.FractionalMaxPool2d(2, output_size=3)) == "FractionalMaxPool2d()"


def test_modules_forward_and_state_dict():
    x = t(distinct((2, 3, 8, 8)))
    values, indices = nn.MaxPool2d(2, return_indices=True)(x)
    np.testing.assert_array_equal(values.numpy(), F.max_pool2d(x, 2).numpy())
    np.testing.assert_array_equal(nn.MaxUnpool2d(2)(values, indices).numpy(),
                                  F.max_unpool2d(values, indices, 2).numpy())
    np.testing.assert_allclose(nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x).numpy(),
                               ref_avg_pool(x.numpy(), (3, 3), (2, 2), (1, 1), False, False))
    assert nn.LPPool1d(2, 2)(x[0]).shape == (3, 8, 4)
    assert nn.AdaptiveMaxPool3d((1, 2, 2))(x).shape == (2, 1, 2, 2)
    assert list(nn.MaxPool2d(2).state_dict().keys()) == []
    assert list(nn.FractionalMaxPool2d(2, output_size=3).state_dict().keys()) == []


# -- properties ----------------------------------------------------------------------------------------

@st.composite
def pool_geometries(draw):
    k = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(k))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(k))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(k))
    padding = tuple(draw(st.integers(0, kernel[d] // 2)) for d in range(k))
    ceil = draw(st.booleans())
    spatial = tuple(draw(st.integers((kernel[d] - 1) * dilation[d] + 1, 7)) for d in range(k))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3))) + spatial
    return shape, kernel, stride, padding, dilation, ceil


@settings(max_examples=40, deadline=None)
@given(pool_geometries(), st.booleans())
def test_max_and_avg_pool_match_references(geometry, cip):
    shape, kernel, stride, padding, dilation, ceil = geometry
    x = distinct(shape)
    rv, ri = ref_max_pool(x, kernel, stride, padding, dilation, ceil)
    values, indices = fb.ops.function("nn_max_pool")(t(x), kernel, stride, padding, dilation, ceil)
    np.testing.assert_array_equal(values.numpy(), rv)
    np.testing.assert_array_equal(indices.numpy(), ri)
    cv, ci = M.max_pool(t(x), kernel, stride, padding, dilation, ceil)
    np.testing.assert_array_equal(ci.numpy(), ri)
    ra = ref_avg_pool(x, kernel, stride, padding, ceil, cip)
    got = fb.ops.function("nn_avg_pool")(t(x), kernel, stride, padding, ceil, cip, None)
    np.testing.assert_allclose(got.numpy(), ra, rtol=1e-12, atol=1e-15)
    g = RNG.standard_normal(ra.shape)
    back = fb.ops.function("nn_avg_pool_backward")(t(g), shape[2:], kernel, stride, padding, ceil, cip, None)
    # the adjoint identity <avg(x), g> == <x, avg_backward(g)>
    np.testing.assert_allclose((ra * g).sum(), (x * back.numpy()).sum(), rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.data())
def test_adaptive_pools_match_references(k, data):
    spatial = tuple(data.draw(st.integers(1, 8)) for _ in range(k))
    out = tuple(data.draw(st.integers(1, 6)) for _ in range(k))
    x = distinct((2, 2) + spatial)
    got = fb.ops.function("nn_adaptive_avg_pool")(t(x), out)
    np.testing.assert_allclose(got.numpy(), ref_adaptive_avg_pool(x, out), rtol=1e-12)
    values, indices = fb.ops.function("nn_adaptive_max_pool")(t(x), out)
    rv, ri = ref_adaptive_max_pool(x, out)
    np.testing.assert_array_equal(values.numpy(), rv)
    np.testing.assert_array_equal(indices.numpy(), ri)


def test_scatter_kernels_check_indices():
    # indices come from users too (max_unpool, the backward op called directly): never trusted
    g = t(np.ones((1, 1, 2)))
    backward = fb.ops.function("nn_max_pool_backward")
    np.testing.assert_array_equal(backward(g, fb.tensor([[[1, 1]]]), (3,)).numpy(), [[[0, 2, 0]]])
    for bad in (3, -1, 2 ** 40):
        with pytest.raises(RuntimeError, match=f"Found an invalid max index: {bad}"):
            backward(g, fb.tensor([[[0, bad]]]), (3,))


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.float16])
def test_global_adaptive_avg_pool_is_the_mean_over_positions(k, dtype):
    """Output size 1 (global average pooling): the mean over positions, forward and backward."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((3, 5) + (4, 7, 3)[:k])
    fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[k - 1]
    xt = t(x, dtype, requires_grad=True)
    y = fn(xt, 1)
    assert y.shape == (3, 5) + (1,) * k and y.dtype == dtype
    tol = {fb.float16: 2e-2, fb.float32: 1e-5, fb.float64: 1e-12}[dtype]
    want = x.astype(np.float16).astype(np.float64) if dtype == fb.float16 else x
    np.testing.assert_allclose(y.detach().numpy().astype(np.float64).reshape(3, 5), want.mean(tuple(range(2, 2 + k))),
                               rtol=tol, atol=tol)
    g = rng.standard_normal(y.shape)
    y.backward(t(g, dtype))
    area = math.prod(x.shape[2:])
    np.testing.assert_allclose(xt.grad.numpy().astype(np.float64), np.broadcast_to(g / area, x.shape),
                               rtol=tol, atol=tol)
    assert gradcheck(lambda a: fn(a, 1), (t(x[:2, :2], requires_grad=True),))


def test_global_adaptive_avg_pool_reads_channels_last_without_a_copy(monkeypatch):
    """A channels-last input is averaged in place (no contiguous copy, not the window kernel);
    contiguous inputs stay on the window kernel."""
    from flambeau_cpu import _C
    from flambeau_cpu.kernels import nn_pooling as P

    seen = []
    real = P._channels_last_mean
    monkeypatch.setattr(P, "_channels_last_mean", lambda a, o, d: seen.append(a.strides) or real(a, o, d))
    window = _C.nn_adaptive_avg_pool
    for dtype in (fb.float32, fb.float64, fb.float16):
        x = fb.randn(2, 6, 5, 4).to(dtype).contiguous(memory_format=fb.channels_last)
        monkeypatch.setattr(_C, "nn_adaptive_avg_pool", None)  # the window kernel would fail if called
        y = F.adaptive_avg_pool2d(x, (1, 1))
        monkeypatch.setattr(_C, "nn_adaptive_avg_pool", window)
        tol = 1e-2 if dtype == fb.float16 else 1e-6
        np.testing.assert_allclose(y.numpy()[..., 0, 0].astype(np.float64),
                                   x.numpy().astype(np.float64).mean((2, 3)), rtol=tol, atol=tol)
        assert y.dtype == dtype
    itemsize = [4, 8, 2]  # float16 is summed in float32 straight from the half-precision input
    assert [s[1] for s in seen] == itemsize
    n = len(seen)
    y2 = nn.AdaptiveAvgPool2d(1)(fb.randn(2, 6, 5, 4))
    assert y2.shape == (2, 6, 1, 1) and len(seen) == n + 1  # asked, and declined (not channels-last)

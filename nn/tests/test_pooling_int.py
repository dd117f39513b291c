"""Pooling of integer tensors, as PyTorch (2.13, CPU) pools them.

PyTorch's max pooling takes uint8, int8, int16, int32 and int64 (exact: a max is one of the
inputs); its average pooling takes int64, summing with wraparound and dividing truncating toward
zero. Every other dtype is refused by the kernel with a NotImplementedError naming it, after the
size checks. The references are written out here with Python ints; the CPU kernels (C++) and the
composites every other backend runs (``_pool_math``) are both checked against them. Comparisons
with PyTorch itself run only where it is installed.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.nn._conformance_pooling import ref_max_pool, ref_out_size
from flambeau.nn._ops import _pool_math as M

MAX_INTS = [fb.uint8, fb.int8, fb.int16, fb.int32, fb.int64]
RNG = np.random.default_rng(15)


def wrap64(v: int) -> int:
    """``v`` as int64 arithmetic leaves it (two's complement)."""
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return wrap64(q if (a >= 0) == (b > 0) else -q)


def ref_avg_pool_int64(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    """PyTorch's int64 average pooling: the window's sum wrapped to int64, divided truncating."""
    spatial = x.shape[2:]
    k = len(spatial)
    out = tuple(ref_out_size(*a, 1, ceil_mode) for a in zip(spatial, kernel_size, stride, padding))
    y = np.zeros(x.shape[:2] + out, dtype=np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*(range(v) for v in out)):
            total, inside, padded = 0, 0, 1
            for d in range(k):
                start = o[d] * stride[d] - padding[d]
                padded *= min(start + kernel_size[d], spatial[d] + padding[d]) - start
            for j in itertools.product(*(range(v) for v in kernel_size)):
                pos = tuple(o[d] * stride[d] - padding[d] + j[d] for d in range(k))
                if all(0 <= q < spatial[d] for d, q in enumerate(pos)):
                    total += int(x[(n, c) + pos])
                    inside += 1
            if inside:
                div = divisor_override or (padded if count_include_pad else inside)
                y[(n, c) + o] = trunc_div(wrap64(total), div)
    return y


def draw_ints(shape, dtype: fb.dtype, extremes: bool) -> np.ndarray:
    """Small values (many ties) or values at the dtype's ends."""
    info = np.iinfo(dtype.numpy_dtype)
    if extremes:
        choices = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], dtype=np.int64)
        choices = choices[(choices >= info.min) & (choices <= info.max)]
        return RNG.choice(choices, size=shape).astype(dtype.numpy_dtype)
    return RNG.integers(max(info.min, -5), 6, size=shape).astype(dtype.numpy_dtype)


@st.composite
def geometries(draw, dilated: bool = True):
    k = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(k))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(k))
    dilation = tuple(draw(st.integers(1, 2)) if dilated else 1 for _ in range(k))
    padding = tuple(draw(st.integers(0, kernel[d] // 2)) for d in range(k))
    ceil = draw(st.booleans())
    spatial = tuple(draw(st.integers((kernel[d] - 1) * dilation[d] + 1, 6)) for d in range(k))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3))) + spatial
    return shape, kernel, stride, padding, dilation, ceil


# -- max pooling ---------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(geometries(), st.sampled_from(MAX_INTS), st.booleans(), st.booleans())
def test_integer_max_pool_matches_reference(geometry, dtype, extremes, channels_last):
    shape, kernel, stride, padding, dilation, ceil = geometry
    x = draw_ints(shape, dtype, extremes)
    rv, ri = ref_max_pool(x, kernel, stride, padding, dilation, ceil)
    xt = fb.tensor(x)
    if channels_last and len(kernel) == 2:
        xt = xt.contiguous(memory_format=fb.channels_last)
    values, indices = fb.ops.function("nn_max_pool")(xt, kernel, stride, padding, dilation, ceil)
    assert values.dtype == dtype and indices.dtype == fb.int64
    np.testing.assert_array_equal(values.numpy(), rv)
    np.testing.assert_array_equal(indices.numpy(), ri)
    cv, ci = M.max_pool(xt, kernel, stride, padding, dilation, ceil)  # the other backends' path
    assert cv.dtype == dtype
    np.testing.assert_array_equal(cv.numpy(), rv)
    np.testing.assert_array_equal(ci.numpy(), ri)


@pytest.mark.parametrize("dtype", MAX_INTS)
def test_integer_max_pool_lowest_value_keeps_first_index(dtype):
    # PyTorch's max starts at the dtype's lowest value: a window of nothing else keeps its first
    # element's index, padding never wins
    low = np.iinfo(dtype.numpy_dtype).min
    x = fb.tensor(np.full((1, 1, 3, 4), low), dtype=dtype)
    for fn in (fb.ops.function("nn_max_pool"), M.max_pool):
        values, indices = fn(x, (3, 3), (1, 2), (1, 1), (1, 1), False)
        np.testing.assert_array_equal(values.numpy(), np.full((1, 1, 3, 2), low))
        np.testing.assert_array_equal(indices.numpy(), [[[[0, 1], [0, 1], [4, 5]]]])


def test_integer_max_pool_extremes_and_2x2_fast_path():
    x = np.array([[-128, -128, -128, 5], [127, 127, 0, -1]], dtype=np.int8).reshape(1, 1, 2, 4)
    values, indices = F.max_pool2d(fb.tensor(x), 2, return_indices=True)
    assert values.dtype == fb.int8
    assert values.tolist() == [[[[127, 5]]]] and indices.tolist() == [[[[4, 3]]]]
    u = fb.tensor(np.array([[0, 255], [255, 0]], dtype=np.uint8)).reshape(1, 1, 2, 2)
    values, indices = F.max_pool2d(u, 2, return_indices=True)
    assert values.tolist() == [[[[255]]]] and indices.tolist() == [[[[1]]]]  # the first of the ties
    big = fb.tensor([[[2 ** 63 - 1, 2 ** 63 - 2, -2 ** 63]]])
    assert F.max_pool1d(big, 2, 1, return_indices=True)[0].tolist() == [[[2 ** 63 - 1, 2 ** 63 - 2]]]


def test_integer_max_pool_modules_and_unbatched():
    x = fb.arange(16, dtype=fb.int32).reshape(1, 4, 4)
    assert nn.MaxPool2d(2)(x).tolist() == [[[5, 7], [13, 15]]]
    assert nn.MaxPool3d(2)(x.reshape(1, 1, 2, 2, 4)).tolist() == [[[[[13, 15]]]]]
    values, indices = nn.MaxPool1d(2, return_indices=True)(x.reshape(1, 16)[:, :6])
    assert values.dtype == fb.int32 and values.tolist() == [[1, 3, 5]] and indices.tolist() == [[1, 3, 5]]


def test_max_pool1d_without_indices_refuses_integers_on_the_cpu():
    # PyTorch's CPU max_pool1d runs a float-only kernel unless indices are asked for
    x = fb.arange(6).reshape(1, 1, 6)
    with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Long'"):
        F.max_pool1d(x, 2)
    with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Byte'"):
        nn.MaxPool1d(2)(x.to(fb.uint8))
    assert F.max_pool1d_with_indices(x, 2)[0].tolist() == [[[1, 3, 5]]]


# -- average pooling -----------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(geometries(dilated=False), st.booleans(), st.sampled_from([None, 1, 2, 3, -2, -1]), st.booleans(),
       st.booleans())
def test_int64_avg_pool_matches_reference(geometry, cip, div, extremes, channels_last):
    shape, kernel, stride, padding, _, ceil = geometry
    x = draw_ints(shape, fb.int64, extremes)
    expected = ref_avg_pool_int64(x, kernel, stride, padding, ceil, cip, div)
    xt = fb.tensor(x)
    if channels_last and len(kernel) == 2:
        xt = xt.contiguous(memory_format=fb.channels_last)
    got = fb.ops.function("nn_avg_pool")(xt, kernel, stride, padding, ceil, cip, div)
    assert got.dtype == fb.int64
    np.testing.assert_array_equal(got.numpy(), expected)
    composite = M.avg_pool(xt, kernel, stride, padding, ceil, cip, div)
    np.testing.assert_array_equal(composite.numpy(), expected)


def test_int64_avg_pool_truncates_and_wraps_as_pytorch():
    # figures from torch 2.13 (CPU): truncation toward zero, and the int64 sum wrapping
    x = fb.tensor([[[-7, -8, 5, 6, -3, 1, 9]]])
    assert F.avg_pool1d(x, 2).tolist() == [[[-7, 5, -1]]]
    assert F.avg_pool1d(x, 3, 2, 1).tolist() == [[[-5, 1, 1, 3]]]
    assert F.avg_pool1d(x, 3, 2, 1, count_include_pad=False).tolist() == [[[-7, 1, 1, 5]]]
    assert F.avg_pool2d(x.reshape(1, 1, 1, 7), (1, 2), divisor_override=-2).tolist() == [[[[7, -5, 1]]]]
    assert F.avg_pool3d(x.reshape(1, 1, 1, 1, 7), (1, 1, 2), divisor_override=3).tolist() == [[[[[-5, 3, 0]]]]]
    big = 2 ** 63 - 1
    b = fb.tensor([[[big, big, big - 1, 3, -big - 1, -big - 1, 5, 7]]])
    expected = [-1, -4611686018427387903, 0, 6]
    assert F.avg_pool1d(b, 2).tolist() == [[expected]]
    assert F.avg_pool2d(b.reshape(1, 1, 1, 8), (1, 2)).tolist() == [[[expected]]]
    assert M.avg_pool(b, (2,), (2,), (0,), False, True, None).tolist() == [[expected]]
    # INT64_MIN / -1: PyTorch's kernel traps (SIGFPE); here it wraps
    m = fb.tensor([[[[-2 ** 63, 4]]]])
    assert F.avg_pool2d(m, 1, divisor_override=-1).tolist() == [[[[-2 ** 63, -4]]]]
    assert M.avg_pool(m, (1, 1), (1, 1), (0, 0), False, True, -1).tolist() == [[[[-2 ** 63, -4]]]]


def test_int64_global_avg_pool():
    # one window over each whole plane: the C++ global path
    x = fb.tensor(RNG.integers(-100, 100, (3, 2, 6, 7)))
    got = F.avg_pool2d(x, (6, 7))
    sums = x.numpy().reshape(3, 2, -1).sum(-1)
    np.testing.assert_array_equal(got.numpy().reshape(3, 2), np.trunc(sums / 42).astype(np.int64))


def test_lp_pool_of_integers_follows_its_composition():
    # PyTorch: int64 pow -> int64 average (truncating) -> float32; int32 ** 2 stays int32, refused
    x = fb.tensor([[[1, 2, 3, 4, -5, 6]]])
    got = F.lp_pool1d(x, 1, 2)
    assert got.dtype == fb.float32 and got.tolist() == [[[2.0, 6.0, 0.0]]]
    np.testing.assert_allclose(F.lp_pool1d(x, 2, 2).numpy(), [[[2.0, 4.898979663848877, 7.745966911315918]]],
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="\"avg_pool2d\" not implemented for 'Int'"):
        F.lp_pool1d(x.to(fb.int32), 2, 2)


# -- refused dtypes ------------------------------------------------------------------------------------

REFUSALS = [
    # call, dtype, PyTorch's message (torch 2.13, CPU)
    (lambda x: F.max_pool2d(x, 2), fb.bool, "\"max_pool2d\" not implemented for 'Bool'"),
    (lambda x: F.max_pool1d(x[0], 2, return_indices=True), fb.bool, "\"max_pool2d\" not implemented for 'Bool'"),
    (lambda x: F.max_pool3d(x[None], (1, 2, 2)), fb.bool, "\"max_pool3d\" not implemented for 'Bool'"),
    (lambda x: F.max_pool2d(x, 2), fb.complex64, "\"max_pool2d\" not implemented for 'ComplexFloat'"),
    (lambda x: F.avg_pool2d(x, 2), fb.int32, "\"avg_pool2d\" not implemented for 'Int'"),
    (lambda x: F.avg_pool1d(x[0], 2), fb.uint8, "\"avg_pool2d\" not implemented for 'Byte'"),
    (lambda x: F.avg_pool3d(x[None], (1, 2, 2)), fb.int8, "\"avg_pool3d_out_frame\" not implemented for 'Char'"),
    (lambda x: F.avg_pool2d(x, 2), fb.bool, "\"avg_pool2d\" not implemented for 'Bool'"),
    (lambda x: F.adaptive_max_pool2d(x, 2), fb.int64, "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    (lambda x: F.adaptive_max_pool1d(x[0], 2), fb.int16, "\"adaptive_max_pool2d\" not implemented for 'Short'"),
    (lambda x: F.adaptive_max_pool3d(x[None], 1), fb.int64,
     "\"adaptive_max_pool3d_cpu\" not implemented for 'Long'"),
    (lambda x: F.adaptive_avg_pool2d(x, 2), fb.int64, "\"adaptive_avg_pool2d\" not implemented for 'Long'"),
    (lambda x: F.adaptive_avg_pool3d(x[None], 2), fb.int64,
     "\"adaptive_avg_pool3d_cpu\" not implemented for 'Long'"),
    (lambda x: F.max_unpool2d(x, fb.zeros(x.shape, dtype=fb.int64), 2), fb.int64,
     "\"max_unpool2d\" not implemented for 'Long'"),
    (lambda x: F.max_unpool1d(x[0], fb.zeros(x[0].shape, dtype=fb.int64), 2), fb.int64,
     "\"max_unpool2d\" not implemented for 'Long'"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=2), fb.int64,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=fb.zeros((1, 2, 2), dtype=fb.int64)),
     fb.int64, "\"fractional_max_pool2d_out_frame\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("call,dtype,message", REFUSALS)
def test_refused_dtypes_raise_pytorchs_error(call, dtype, message):
    x = fb.zeros((1, 2, 4, 4), dtype=dtype)
    with pytest.raises(NotImplementedError, match=message.replace("(", r"\(")):
        call(x)


def test_refusal_comes_after_the_size_checks_as_in_pytorch():
    with pytest.raises(RuntimeError, match=r"Given input size: \(2x1x1\)\. Calculated output size: \(2x0x0\)"):
        F.max_pool2d(fb.zeros((1, 2, 1, 1), dtype=fb.bool), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.avg_pool2d(fb.zeros((1, 2, 4, 4), dtype=fb.int32), 2, padding=3)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(fb.zeros((1, 2, 4, 4), dtype=fb.int32), 2, divisor_override=0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):  # even with nothing to pool
        F.max_pool2d(fb.zeros((0, 2, 4, 4), dtype=fb.bool), 2)
    with pytest.raises(RuntimeError, match="Expect _random_samples to have the same dtype as input"):
        F.fractional_max_pool2d(fb.zeros((1, 1, 5, 5), dtype=fb.int64), 2, output_size=2,
                                _random_samples=fb.rand(1, 1, 2))
    with pytest.raises(RuntimeError, match="Expect _random_samples to have the same dtype as input"):
        F.fractional_max_pool2d(fb.zeros((1, 1, 5, 5)), 2, output_size=2,
                                _random_samples=fb.rand(1, 1, 2, dtype=fb.float64))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_adaptive_avg_pool_to_size_one_is_mean(k):
    # PyTorch pools to size 1 with mean(), whose own error refuses integers and bool
    x = fb.zeros((1, 2) + (3,) * k, dtype=fb.int64)
    fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[k - 1]
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be either a "
                                           "floating point or complex dtype. Got: Long"):
        fn(x, 1)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError,
                       match="(?i)only Tensors of floating point and complex dtype can require gradients"):
        fb.zeros(3, dtype=fb.int64).requires_grad_()


# -- PyTorch itself, where installed --------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(geometries(), st.sampled_from(MAX_INTS), st.booleans(), st.booleans(),
       st.sampled_from([None, 1, 3, -2]))
def test_integer_pooling_matches_torch(geometry, dtype, extremes, cip, div):
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    shape, kernel, stride, padding, dilation, ceil = geometry
    k = len(kernel)
    x = draw_ints(shape, dtype, extremes)
    tx = torch.from_numpy(x.copy())
    tv, ti = getattr(tF, f"max_pool{k}d")(tx, kernel, stride, padding, dilation, ceil, return_indices=True)
    v, i = getattr(F, f"max_pool{k}d")(fb.tensor(x), kernel, stride, padding, dilation, ceil, return_indices=True)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    x64 = draw_ints(shape, fb.int64, extremes)
    args = (kernel, stride, padding, ceil, cip) + ((div,) if k > 1 else ())
    if k > 1 and div == -1:
        return  # torch traps on INT64_MIN / -1
    ta = getattr(tF, f"avg_pool{k}d")(torch.from_numpy(x64.copy()), *args)
    got = getattr(F, f"avg_pool{k}d")(fb.tensor(x64), *args)
    np.testing.assert_array_equal(got.numpy(), ta.numpy())

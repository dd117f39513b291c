"""Convolution: F.conv1d/2d/3d, F.conv_transpose1d/2d/3d, F.unfold/F.fold and their modules.

References are written out in numpy (float64): a convolution as a sum over kernel offsets of
strided slices of the padded input, a transposed convolution as the scatter of each input element
times the kernel onto a canvas then cropped. The CPU backend runs the C++ im2col/col2im kernels; the
composites (``_conv_math``), which every other backend runs, are checked against the same references.
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
from flambeau.nn._ops import _conv_math as C

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def tup(v, k):
    return (v,) * k if isinstance(v, int) else tuple(v)


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    k = w.ndim - 2
    s, p, d = tup(stride, k), tup(padding, k), tup(dilation, k)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    out_size = [(xp.shape[2 + i] - d[i] * (w.shape[2 + i] - 1) - 1) // s[i] + 1 for i in range(k)]
    n, c = x.shape[:2]
    o = w.shape[0]
    cg, og = c // groups, o // groups
    out = np.zeros((n, o, *out_size))
    for kidx in itertools.product(*(range(v) for v in w.shape[2:])):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + s[i] * (out_size[i] - 1) + 1, s[i]) for i in range(k))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + kidx]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg:(g + 1) * cg], wk)
    if b is not None:
        out += b.reshape((-1,) + (1,) * k)
    return out


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    k = w.ndim - 2
    s, p, op, d = tup(stride, k), tup(padding, k), tup(output_padding, k), tup(dilation, k)
    n, c = x.shape[:2]
    insz = x.shape[2:]
    cg, og = c // groups, w.shape[1]
    full = [(insz[i] - 1) * s[i] + d[i] * (w.shape[2 + i] - 1) + 1 + op[i] for i in range(k)]
    canvas = np.zeros((n, og * groups, *full))
    for kidx in itertools.product(*(range(v) for v in w.shape[2:])):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + s[i] * (insz[i] - 1) + 1, s[i]) for i in range(k))
        for g in range(groups):
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kidx]
            canvas[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg], wk)
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(k))
    out = canvas[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * k)
    return out


CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T_FN = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}

# (dims, in_size, kernel, stride, padding, dilation, groups, channels_in, channels_out)
CASES = [
    (1, (9,), (3,), 1, 0, 1, 1, 2, 3),
    (1, (10,), (4,), 2, 1, 2, 2, 4, 6),
    (2, (7, 6), (3, 3), 1, 1, 1, 1, 3, 4),
    (2, (8, 9), (3, 2), (2, 1), (1, 0), (1, 2), 1, 2, 3),
    (2, (7, 7), (3, 3), 2, 2, 2, 3, 3, 6),  # depthwise (groups = in channels)
    (2, (5, 6), (1, 1), 1, 0, 1, 2, 4, 2),
    (3, (5, 4, 6), (2, 3, 2), (1, 2, 1), (1, 0, 1), 1, 1, 2, 3),
    (3, (6, 5, 5), (3, 2, 2), 2, 1, (1, 2, 1), 2, 2, 4),
]


def _case_arrays(case, batch=2):
    k, size, kernel, stride, padding, dilation, groups, cin, cout = case
    x = RNG.standard_normal((batch, cin) + size)
    w = RNG.standard_normal((cout, cin // groups) + kernel)
    b = RNG.standard_normal(cout)
    return x, w, b


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_matches_reference(case, bias):
    k, _, _, stride, padding, dilation, groups, _, _ = case
    x, w, b = _case_arrays(case)
    b = b if bias else None
    want = ref_conv(x, w, b, stride, padding, dilation, groups)
    got = CONV_FN[k](t(x), t(w), None if b is None else t(b), stride, padding, dilation, groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    # the composite, which every other backend runs, gives the same
    comp = C.convolution(t(x), t(w), None if b is None else t(b), stride, padding, dilation, False, 0, groups)
    np.testing.assert_allclose(comp.numpy(), want, rtol=1e-10, atol=1e-10)


# (dims, in_size, kernel, stride, padding, output_padding, dilation, groups, channels_in, channels_out)
T_CASES = [
    (1, (5,), (3,), 1, 0, 0, 1, 1, 2, 3),
    (1, (6,), (4,), 3, 1, 2, 1, 2, 4, 2),
    (2, (4, 5), (3, 3), 2, 1, 1, 1, 1, 3, 2),
    (2, (3, 4), (3, 2), (2, 3), (0, 1), (1, 0), (2, 1), 1, 2, 3),
    (2, (4, 4), (2, 2), 1, 0, 1, 2, 2, 4, 4),  # output_padding < dilation, stride 1
    (3, (3, 2, 3), (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 0, 1), 1, 1, 2, 2),
]


@pytest.mark.parametrize("case", T_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_matches_reference(case, bias):
    k, size, kernel, stride, padding, op, dilation, groups, cin, cout = case
    x = RNG.standard_normal((2, cin) + size)
    w = RNG.standard_normal((cin, cout // groups) + kernel)
    b = RNG.standard_normal(cout) if bias else None
    want = ref_conv_transpose(x, w, b, stride, padding, op, groups, dilation)
    got = CONV_T_FN[k](t(x), t(w), None if b is None else t(b), stride, padding, op, groups, dilation)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    comp = C.convolution(t(x), t(w), None if b is None else t(b), stride, padding, dilation, True, op, groups)
    np.testing.assert_allclose(comp.numpy(), want, rtol=1e-10, atol=1e-10)


def _small(case):
    """A float64 case small enough for gradcheck's finite differences."""
    k, size, kernel, stride, padding, dilation, groups, cin, cout = case
    x = t(RNG.standard_normal((2, cin) + size), requires_grad=True)
    w = t(RNG.standard_normal((cout, cin // groups) + kernel), requires_grad=True)
    b = t(RNG.standard_normal(cout), requires_grad=True)
    return x, w, b


@pytest.mark.parametrize("case", [c for c in CASES if c[0] < 3] + [(3, (3, 3, 4), (2, 2, 2), (1, 2, 1), 1, 1, 2, 2, 2)])
def test_conv_gradcheck(case):
    k, _, _, stride, padding, dilation, groups, _, _ = case
    x, w, b = _small(case)
    fn = CONV_FN[k]
    assert gradcheck(lambda x, w, b: fn(x, w, b, stride, padding, dilation, groups), (x, w, b))


@pytest.mark.parametrize("case", T_CASES)
def test_conv_transpose_gradcheck(case):
    k, size, kernel, stride, padding, op, dilation, groups, cin, cout = case
    x = t(RNG.standard_normal((1, cin) + size), requires_grad=True)
    w = t(RNG.standard_normal((cin, cout // groups) + kernel), requires_grad=True)
    b = t(RNG.standard_normal(cout), requires_grad=True)
    fn = CONV_T_FN[k]
    assert gradcheck(lambda x, w, b: fn(x, w, b, stride, padding, op, groups, dilation), (x, w, b))


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_gradgradcheck(transposed):
    x = t(RNG.standard_normal((1, 2, 5, 4)), requires_grad=True)
    if transposed:
        w = t(RNG.standard_normal((2, 3, 2, 3)), requires_grad=True)
        fn = lambda x, w: F.conv_transpose2d(x, w, None, 2, 1, 1)  # noqa: E731
    else:
        w = t(RNG.standard_normal((3, 2, 2, 3)), requires_grad=True)
        fn = lambda x, w: F.conv2d(x, w, None, (2, 1), 1, (1, 2))  # noqa: E731
    assert gradgradcheck(fn, (x, w))


def test_composite_gradcheck():
    """The composite's own graph (index_select / index_add + matmul) differentiates correctly."""
    x = t(RNG.standard_normal((2, 4, 5, 6)), requires_grad=True)
    w = t(RNG.standard_normal((4, 2, 3, 2)), requires_grad=True)
    b = t(RNG.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: C.convolution(x, w, b, (2, 1), 1, (1, 2), False, 0, 2), (x, w, b))
    wt = t(RNG.standard_normal((4, 3, 3, 2)), requires_grad=True)
    bt = t(RNG.standard_normal(6), requires_grad=True)
    assert gradcheck(lambda x, w, b: C.convolution(x, w, b, 2, 1, 1, True, 1, 2), (x, wt, bt))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, False), (False, False, True)])
def test_backward_op_matches_composite(transposed, mask):
    backward = fb.ops.function("nn_convolution_backward")
    x = t(RNG.standard_normal((2, 4, 6, 5)))
    w = t(RNG.standard_normal((4, 3, 3, 2)) if transposed else RNG.standard_normal((6, 2, 3, 2)))
    args = ((2, 1), (1, 0), (1, 2), transposed, (1, 0) if transposed else 0, 2)
    out = C.convolution(x, w, None, *args)
    g = t(RNG.standard_normal(tuple(out.shape)))
    got = backward(g, x, w, *args, list(mask))
    want = C.convolution_backward(g, x, w, *args, [True, True, True])
    for m, a, b in zip(mask, got, want):
        if m:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)
        else:
            assert tuple(a.shape) == (0,)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 3), n=st.integers(1, 2), cg=st.integers(1, 3), og=st.integers(1, 3), groups=st.integers(1, 2),
       data=st.data())
def test_conv_hypothesis_shapes(k, n, cg, og, groups, data):
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(k))
    padding = tuple(data.draw(st.integers(0, 2)) for _ in range(k))
    size = tuple(data.draw(st.integers(max(1, dilation[i] * (kernel[i] - 1) + 1 - 2 * padding[i]), 7))
                 for i in range(k))
    x = RNG.standard_normal((n, cg * groups) + size)
    w = RNG.standard_normal((og * groups, cg) + kernel)
    want = ref_conv(x, w, None, stride, padding, dilation, groups)
    got = CONV_FN[k](t(x), t(w), None, stride, padding, dilation, groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    # the transposed convolution is the adjoint: <conv(x), y> == <x, conv_transpose(y)>
    y = RNG.standard_normal(want.shape)
    op = tuple(size[i] - ((want.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1)
               for i in range(k))
    back = CONV_T_FN[k](t(y), t(w), None, stride, padding, op, groups, dilation).numpy()
    assert back.shape == x.shape
    np.testing.assert_allclose((want * y).sum(), (x * back).sum(), rtol=1e-9)


def test_padding_same_and_valid():
    x = RNG.standard_normal((2, 3, 7, 8))
    w = RNG.standard_normal((4, 3, 3, 5))
    got = F.conv2d(t(x), t(w), padding="same", dilation=(2, 1))
    np.testing.assert_allclose(got.numpy(), ref_conv(x, w, None, 1, (2, 2), (2, 1)), rtol=1e-10, atol=1e-10)
    got = F.conv2d(t(x), t(w), padding="valid")
    np.testing.assert_allclose(got.numpy(), ref_conv(x, w), rtol=1e-10, atol=1e-10)


def test_padding_same_even_kernel_pads_the_right_more():
    # total padding 3: 1 on the left, 2 on the right, as PyTorch
    x = np.arange(6.0).reshape(1, 1, 6)
    w = np.zeros((1, 1, 4))
    w[0, 0, 0] = 1
    np.testing.assert_array_equal(F.conv1d(t(x), t(w), padding="same").numpy(), [[[0, 0, 1, 2, 3, 4]]])
    x2 = RNG.standard_normal((1, 2, 5, 6))
    w2 = RNG.standard_normal((3, 2, 2, 4))
    want = ref_conv(np.pad(x2, [(0, 0), (0, 0), (0, 1), (1, 2)]), w2)
    got = F.conv2d(t(x2), t(w2), padding="same")
    assert tuple(got.shape) == (1, 3, 5, 6)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    x2g = t(x2, requires_grad=True)
    w2g = t(w2, requires_grad=True)
    assert gradcheck(lambda x, w: F.conv2d(x, w, padding="same"), (x2g, w2g))


def test_unbatched_inputs():
    x = RNG.standard_normal((3, 6, 5))
    w = RNG.standard_normal((4, 3, 2, 2))
    got = F.conv2d(t(x), t(w), padding=1)
    np.testing.assert_allclose(got.numpy(), ref_conv(x[None], w, None, 1, 1)[0], rtol=1e-10)
    wt = RNG.standard_normal((3, 2, 2, 2))
    got = F.conv_transpose2d(t(x), t(wt), stride=2)
    np.testing.assert_allclose(got.numpy(), ref_conv_transpose(x[None], wt, None, 2)[0], rtol=1e-10)


def test_non_contiguous_inputs():
    x = RNG.standard_normal((2, 3, 6, 7))
    w = RNG.standard_normal((3, 4, 3, 3))  # used transposed: (4, 3, 3, 3)
    xt = t(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(2, 3)
    wt = t(w).transpose(0, 1)
    assert not xt.is_contiguous() and not wt.is_contiguous()
    want = ref_conv(x, w.transpose(1, 0, 2, 3), None, 1, 1)
    np.testing.assert_allclose(F.conv2d(xt, wt, padding=1).numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(F.conv2d(t(x)[:, :, ::2, 1:], t(w.transpose(1, 0, 2, 3)), padding=1).numpy(),
                               ref_conv(x[:, :, ::2, 1:], w.transpose(1, 0, 2, 3), None, 1, 1), rtol=1e-10)


@pytest.mark.parametrize("dtype, tol", [(fb.float32, 1e-5), (fb.float16, 2e-2), (fb.bfloat16, 1e-1)])
def test_dtypes(dtype, tol):
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = (RNG.standard_normal((4, 3, 3, 3)) / 3).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    got = F.conv2d(t(x, dtype), t(w, dtype), t(b, dtype), padding=1)
    assert got.dtype == dtype
    want = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 1, 1)
    np.testing.assert_allclose(got.to(fb.float64).numpy(), want, rtol=tol, atol=tol * 4)
    xg = t(x, dtype, requires_grad=True)
    F.conv2d(xg, t(w, dtype), padding=1).sum().backward()
    assert xg.grad.dtype == dtype and tuple(xg.grad.shape) == x.shape


def test_empty_batch():
    out = F.conv2d(t(np.zeros((0, 3, 8, 8))), t(RNG.standard_normal((4, 3, 3, 3))))
    assert tuple(out.shape) == (0, 4, 6, 6)


# -- errors -----------------------------------------------------------------------------------------------


def _raises(exc, match, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == match, str(info.value)


X = t(np.zeros((1, 3, 8, 8)), fb.float32)


def test_errors_match_pytorch():
    w = t(np.zeros((4, 3, 3, 3)), fb.float32)
    _raises(RuntimeError, "Given groups=1, weight of size [4, 4, 3, 3], expected input[1, 3, 8, 8] to have 4 "
            "channels, but got 3 channels instead", lambda: F.conv2d(X, t(np.zeros((4, 4, 3, 3)), fb.float32)))
    _raises(RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]",
            lambda: F.conv2d(t(np.zeros((2, 3)), fb.float32), w))
    _raises(RuntimeError, "Given groups=2, weight of size [4, 1, 3, 3], expected input[1, 3, 8, 8] to have 2 "
            "channels, but got 3 channels instead", lambda: F.conv2d(X, t(np.zeros((4, 1, 3, 3)), fb.float32),
                                                                      groups=2))
    _raises(RuntimeError, "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of "
            "size [[3, 1, 3, 3]] instead", lambda: F.conv2d(X, t(np.zeros((3, 1, 3, 3)), fb.float32), groups=2))
    _raises(RuntimeError, "Calculated padded input size per channel: (8 x 8). Kernel size: (10 x 10). Kernel size "
            "can't be greater than actual input size", lambda: F.conv2d(X, t(np.zeros((4, 3, 10, 10)), fb.float32)))
    _raises(RuntimeError, "padding='same' is not supported for strided convolutions",
            lambda: F.conv2d(X, w, stride=2, padding="same"))
    _raises(RuntimeError, "Invalid padding string: 'foo'", lambda: F.conv2d(X, w, padding="foo"))
    _raises(RuntimeError, "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, "
            "but got bias of size [5] instead", lambda: F.conv2d(X, w, t(np.zeros(5), fb.float32)))
    _raises(RuntimeError, "expected scalar type Double but found Float", lambda: F.conv2d(X.double(), w))
    _raises(RuntimeError, "Input type (float) and bias type (double) should be the same",
            lambda: F.conv2d(X, w, t(np.zeros(4))))
    _raises(RuntimeError, "non-positive stride is not supported", lambda: F.conv2d(X, w, stride=0))
    _raises(RuntimeError, "negative padding is not supported", lambda: F.conv2d(X, w, padding=-1))
    _raises(RuntimeError, "dilation should be greater than zero, but got [0, 0]", lambda: F.conv2d(X, w, dilation=0))
    _raises(RuntimeError, "non-positive groups is not supported", lambda: F.conv2d(X, w, groups=0))
    _raises(RuntimeError, "expected stride to be a single integer value or a list of 2 values to match the "
            "convolution dimensions, but got stride=[1, 1, 1]", lambda: F.conv2d(X, w, stride=(1, 1, 1)))


def test_transposed_errors_match_pytorch():
    _raises(RuntimeError, "output padding must be smaller than either stride or dilation, but got "
            "output_padding_height: 1 output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 "
            "dilation_width: 1", lambda: F.conv_transpose2d(X, t(np.zeros((3, 4, 3, 3)), fb.float32),
                                                            output_padding=1))
    _raises(RuntimeError, "output padding must be smaller than either stride or dilation, but got "
            "output_padding_height: 0 output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 "
            "dilation_width: 1", lambda: F.conv_transpose1d(t(np.zeros((1, 3, 8)), fb.float32),
                                                            t(np.zeros((3, 4, 3)), fb.float32), output_padding=1))
    _raises(RuntimeError, "Given transposed=1, weight of size [2, 4, 3, 3], expected input[1, 3, 8, 8] to have 2 "
            "channels, but got 3 channels instead",
            lambda: F.conv_transpose2d(X, t(np.zeros((2, 4, 3, 3)), fb.float32)))
    _raises(RuntimeError, "Given input size per channel: (1 x 1). Calculated output size per channel: (-1 x -1). "
            "Output size is too small", lambda: F.conv_transpose2d(t(np.zeros((1, 3, 1, 1)), fb.float32),
                                                                    t(np.zeros((3, 4, 3, 3)), fb.float32), padding=2))
    _raises(RuntimeError, "negative output_padding is not supported",
            lambda: F.conv_transpose2d(X, t(np.zeros((3, 4, 3, 3)), fb.float32), output_padding=-1))
    _raises(TypeError, "conv_transpose2d(): argument 'padding' must be tuple of ints, not str",
            lambda: F.conv_transpose2d(X, t(np.zeros((3, 4, 3, 3)), fb.float32), padding="same"))


def test_integer_input_rejected():
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.conv2d(fb.zeros((1, 3, 8, 8), dtype=fb.int64), fb.zeros((4, 3, 3, 3), dtype=fb.int64))


# -- unfold / fold ----------------------------------------------------------------------------------------


def ref_unfold(x, k, d, p, s):
    n, c = x.shape[:2]
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, k[0], k[1], oh, ow))
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                                 j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


@pytest.mark.parametrize("k, d, p, s", [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 2), (2, 3)),
                                        ((1, 3), (1, 1), (1, 0), (1, 2))])
def test_unfold_fold(k, d, p, s):
    x = RNG.standard_normal((2, 3, 7, 8))
    got = F.unfold(t(x), k, d, p, s)
    want = ref_unfold(x, k, d, p, s)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(nn.Unfold(k, d, p, s)(t(x[0])).numpy(), want[0], rtol=1e-12)
    # fold is unfold's adjoint: <unfold(x), y> == <x, fold(y)>
    y = RNG.standard_normal(want.shape)
    back = F.fold(t(y), (7, 8), k, d, p, s).numpy()
    assert back.shape == x.shape
    np.testing.assert_allclose((want * y).sum(), (x * back).sum(), rtol=1e-10)
    np.testing.assert_allclose(nn.Fold((7, 8), k, d, p, s)(t(y[1])).numpy(), back[1], rtol=1e-12)
    xs = t(RNG.standard_normal((1, 2, 5, 6)), requires_grad=True)
    assert gradcheck(lambda x: F.unfold(x, k, d, p, s), (xs,))
    ys = t(F.unfold(fb.zeros((1, 2, 5, 6), dtype=fb.float64), k, d, p, s).numpy() + 1.0, requires_grad=True)
    assert gradcheck(lambda y: F.fold(y, (5, 6), k, d, p, s), (ys,))


def test_unfold_fold_errors():
    _raises(RuntimeError, "Given input with spatial size (2, 2), kernel_size=(3, 3), dilation=(1, 1), padding=(0, 0), "
            "calculated shape of the array of sliding blocks as (0, 0), but its components must be at least one.",
            lambda: F.unfold(fb.zeros((1, 2, 2, 2)), 3))
    _raises(RuntimeError, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
            "got input.size(1)=5 and kernel_size=(2, 2).", lambda: F.fold(fb.zeros((1, 5, 9)), (4, 4), 2))
    _raises(RuntimeError, "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
            "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of sliding blocks "
            "3 * 3 = 9, but got input.size(2)=8.", lambda: F.fold(fb.zeros((1, 8, 8)), (4, 4), 2))
    _raises(RuntimeError, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
            "dimensions for input, but got: [2, 3, 4, 4]", lambda: F.fold(fb.zeros((2, 3, 4, 4)), (4, 4), 2))


# -- modules ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls, k", [(nn.Conv1d, 1), (nn.Conv2d, 2), (nn.Conv3d, 3)])
def test_conv_module(cls, k):
    fb.manual_seed(0)
    m = cls(4, 6, 3, stride=2, padding=1, groups=2)
    assert tuple(m.weight.shape) == (6, 2) + (3,) * k and tuple(m.bias.shape) == (6,)
    assert m.kernel_size == (3,) * k and m.stride == (2,) * k and m.padding == (1,) * k
    assert list(m.state_dict()) == ["weight", "bias"]
    bound = 1 / math.sqrt(2 * 3 ** k)  # kaiming-uniform(a=sqrt(5)) and the bias: both U(-1/sqrt(fan_in), ..)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    x = RNG.standard_normal((2, 4) + (7,) * k)
    want = ref_conv(x, m.weight.detach().to(fb.float64).numpy(), m.bias.detach().to(fb.float64).numpy(), 2, 1, 1, 2)
    np.testing.assert_allclose(m(t(x, fb.float32)).detach().to(fb.float64).numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls, k", [(nn.ConvTranspose1d, 1), (nn.ConvTranspose2d, 2), (nn.ConvTranspose3d, 3)])
def test_conv_transpose_module(cls, k):
    m = cls(4, 6, 3, stride=2, padding=1, groups=2, dtype=fb.float64)
    assert tuple(m.weight.shape) == (4, 3) + (3,) * k
    x = t(RNG.standard_normal((2, 4) + (4,) * k))
    assert tuple(m(x).shape) == (2, 6) + (7,) * k
    out = m(x, output_size=(8,) * k)
    assert tuple(out.shape) == (2, 6) + (8,) * k
    want = ref_conv_transpose(x.numpy(), m.weight.detach().numpy(), m.bias.detach().numpy(), 2, 1, 1, 2)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10)
    assert tuple(m(x, output_size=[2, 6] + [7] * k).shape) == (2, 6) + (7,) * k
    with pytest.raises(ValueError, match=r"requested an output size of \[9"):
        m(x, output_size=(9,) * k)
    with pytest.raises(ValueError, match=f"ConvTranspose{k}D: for {k + 2}D input, output_size must have"):
        m(x, output_size=(8,) * (k + 1))


def test_module_repr_matches_pytorch():
    assert repr(nn.Conv2d(3, 4, 3, padding="same", padding_mode="reflect", bias=False, dilation=2)) == (
        "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), bias=False, "
        "padding_mode=reflect)")
    assert repr(nn.Conv1d(2, 4, 5, groups=2)) == "Conv1d(2, 4, kernel_size=(5,), stride=(1,), groups=2)"
    assert repr(nn.ConvTranspose2d(3, 4, (3, 2), stride=2, output_padding=1)) == (
        "ConvTranspose2d(3, 4, kernel_size=(3, 2), stride=(2, 2), output_padding=(1, 1))")
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Fold(3, 2)) == "Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)"
    assert nn.Conv2d(4, 4, 4, padding="same")._reversed_padding_repeated_twice == [1, 2, 1, 2]


def test_module_errors_match_pytorch():
    _raises(ValueError, "padding='same' is not supported for strided convolutions",
            lambda: nn.Conv2d(3, 4, 3, stride=2, padding="same"))
    _raises(ValueError, "Invalid padding string 'foo', should be one of {'same', 'valid'}"
            if repr({"same", "valid"}) == "{'same', 'valid'}" else
            "Invalid padding string 'foo', should be one of {'valid', 'same'}",
            lambda: nn.Conv2d(3, 4, 3, padding="foo"))
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="foo")
    _raises(ValueError, 'Only "zeros" padding mode is supported for ConvTranspose2d',
            lambda: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"))
    _raises(ValueError, "in_channels must be divisible by groups", lambda: nn.Conv2d(3, 4, 3, groups=2))
    _raises(ValueError, "out_channels must be divisible by groups", lambda: nn.Conv2d(4, 3, 3, groups=2))
    _raises(ValueError, "groups must be a positive integer", lambda: nn.Conv2d(3, 4, 3, groups=0))


@pytest.mark.parametrize("lazy, full, transposed", [(nn.LazyConv1d, nn.Conv1d, False),
                                                     (nn.LazyConv2d, nn.Conv2d, False),
                                                     (nn.LazyConv3d, nn.Conv3d, False),
                                                     (nn.LazyConvTranspose1d, nn.ConvTranspose1d, True),
                                                     (nn.LazyConvTranspose2d, nn.ConvTranspose2d, True),
                                                     (nn.LazyConvTranspose3d, nn.ConvTranspose3d, True)])
def test_lazy_conv(lazy, full, transposed):
    k = int(full.__name__[-2])
    m = lazy(6, 3, groups=2)
    assert m.has_uninitialized_params()
    out = m(fb.randn((2, 4) + (5,) * k))
    assert type(m) is full and m.in_channels == 4
    assert tuple(m.weight.shape) == ((4, 3) if transposed else (6, 2)) + (3,) * k
    assert tuple(out.shape) == (2, 6) + ((7,) if transposed else (3,)) * k
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lazy(6, 3, groups=2)(fb.randn((1, 3) + (5,) * k))


# -- fusion -----------------------------------------------------------------------------------------------


def _trained_bn(cls, c):
    bn = cls(c, dtype=fb.float64)
    with fb.no_grad():
        bn.running_mean.copy_(t(RNG.standard_normal(c)))
        bn.running_var.copy_(t(RNG.uniform(0.5, 2.0, c)))
        bn.weight.copy_(t(RNG.standard_normal(c)))
        bn.bias.copy_(t(RNG.standard_normal(c)))
    return bn.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval(bias):
    from flambeau.nn.utils import fuse_conv_bn_eval

    conv = nn.Conv2d(3, 4, 3, padding=1, bias=bias, dtype=fb.float64).eval()
    bn = _trained_bn(nn.BatchNorm2d, 4)
    x = t(RNG.standard_normal((2, 3, 5, 5)))
    fused = fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and fused.bias is not None and isinstance(fused.weight, nn.Parameter)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    convt = nn.ConvTranspose2d(3, 4, 3, stride=2, bias=bias, dtype=fb.float64).eval()
    fused_t = fuse_conv_bn_eval(convt, bn, transpose=True)
    np.testing.assert_allclose(fused_t(x).detach().numpy(), bn(convt(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(conv.train(), bn)


def test_fuse_linear_bn_eval():
    from flambeau.nn.utils import fuse_linear_bn_eval

    lin = nn.Linear(5, 4, dtype=fb.float64).eval()
    bn = _trained_bn(nn.BatchNorm1d, 4)
    x = t(RNG.standard_normal((3, 5)))
    fused = fuse_linear_bn_eval(lin, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(lin(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fuse_linear_bn_eval(lin, _trained_bn(nn.BatchNorm1d, 3))


# -- padding modes (through F.pad) -------------------------------------------------------------------------

_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.skipif(not hasattr(F, "pad"), reason="F.pad (the padding family) is not there yet")
@pytest.mark.parametrize("mode", sorted(_NP_MODES))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_padding_modes(mode, k):
    m = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[k](2, 3, 3, padding=(1, 2, 1)[:k] if k > 1 else 2,
                                                     padding_mode=mode, dtype=fb.float64)
    x = RNG.standard_normal((2, 2) + (5,) * k)
    pads = [(0, 0), (0, 0)] + [(p, p) for p in m.padding]
    want = ref_conv(np.pad(x, pads, mode=_NP_MODES[mode]), m.weight.detach().numpy(), m.bias.detach().numpy())
    np.testing.assert_allclose(m(t(x)).detach().numpy(), want, rtol=1e-10, atol=1e-12)
    same = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[k](2, 3, 4, padding="same", padding_mode=mode,
                                                         dtype=fb.float64)
    pads = [(0, 0), (0, 0)] + [(1, 2)] * k
    want = ref_conv(np.pad(x, pads, mode=_NP_MODES[mode]), same.weight.detach().numpy(), same.bias.detach().numpy())
    np.testing.assert_allclose(same(t(x)).detach().numpy(), want, rtol=1e-10, atol=1e-12)

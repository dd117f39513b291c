"""Normalization: layer/batch/group/instance/RMS norm, local response norm, normalize.

References are written out in numpy (float64). The CPU backend runs the fused kernels for layer and
batch norm; the composites (``_norm_math``), which every other backend runs, are checked against
the same references and against the kernels.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._ops import _norm_math as M

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def ref_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, mean, 1 / np.sqrt(var + eps)


def ref_batch_norm(x, mean, var, w=None, b=None, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


# -- layer norm -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
@pytest.mark.parametrize("shape,k", [((4, 7), 1), ((2, 3, 5), 2), ((3, 40), 1), ((6,), 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward(dtype, tol, shape, k, affine):
    x = RNG.standard_normal(shape) * 3 + 1
    w = RNG.standard_normal(shape[-k:]) if affine else None
    b = RNG.standard_normal(shape[-k:]) if affine else None
    expected = ref_layer_norm(x, k, w, b)[0]
    args = (t(w, dtype) if affine else None, t(b, dtype) if affine else None)
    got = F.layer_norm(t(x, dtype), shape[-k:], *args)
    assert got.dtype == dtype and tuple(got.shape) == shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol)
    # the composite every backend falls back on agrees
    np.testing.assert_allclose(M.layer_norm(t(x, dtype), shape[-k:], *args)[0].numpy(), expected, rtol=tol, atol=tol)


def test_layer_norm_statistics_outputs():
    x = RNG.standard_normal((3, 4, 5))
    out, mean, rstd = fb.ops.function("nn_layer_norm")(t(x), (4, 5), None, None, 1e-5)
    _, rmean, rrstd = ref_layer_norm(x, 2)
    assert tuple(mean.shape) == (3, 1, 1)
    np.testing.assert_allclose(mean.numpy(), rmean, rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), rrstd, rtol=1e-12)


def test_layer_norm_half_accumulates_in_float32():
    x = RNG.standard_normal((8, 300)).astype(np.float32) * 10 + 100
    for dtype in (fb.float16, fb.bfloat16):
        xt = t(x, fb.float32).to(dtype)
        got = F.layer_norm(xt, (300,))
        assert got.dtype == dtype
        expected = ref_layer_norm(xt.to(fb.float64).numpy(), 1)[0]
        np.testing.assert_allclose(got.to(fb.float64).numpy(), expected, atol=0.05)
        _, mean, _ = fb.ops.function("nn_layer_norm")(xt, (300,), None, None, 1e-5)
        assert mean.dtype == fb.float32


def test_layer_norm_noncontiguous_input():
    x = RNG.standard_normal((5, 6))
    got = F.layer_norm(t(x).t(), (5,))
    np.testing.assert_allclose(got.numpy(), ref_layer_norm(x.T, 1)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_gradcheck(affine):
    x = t(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    w = t(RNG.standard_normal((2, 4)), requires_grad=True) if affine else None
    b = t(RNG.standard_normal((2, 4)), requires_grad=True) if affine else None
    inputs = (x, w, b) if affine else (x,)

    def fn(*a):
        return F.layer_norm(a[0], (2, 4), *(a[1:] if affine else ()))

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_layer_norm_backward_kernel_matches_composite():
    x = t(RNG.standard_normal((7, 33)))
    g = t(RNG.standard_normal((7, 33)))
    w = t(RNG.standard_normal(33))
    _, mean, rstd = fb.ops.function("nn_layer_norm")(x, (33,), w, None, 1e-5)
    got = fb.ops.function("nn_layer_norm_backward")(g, x, mean, rstd, (33,), w)
    want = M.layer_norm_backward(g, x, mean, rstd, (33,), w)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 9), n=st.integers(1, 70), dtype=st.sampled_from([fb.float32, fb.float64]),
       weighted=st.booleans())
def test_layer_norm_kernel_vs_composite_property(rows, n, dtype, weighted):
    x = t(RNG.standard_normal((rows, n)) * 5, dtype, requires_grad=True)
    w = t(RNG.standard_normal(n), dtype, requires_grad=True) if weighted else None
    out = F.layer_norm(x, (n,), w)
    ref = M.layer_norm(x.detach(), (n,), w.detach() if weighted else None)[0]
    tol = 1e-4 if dtype == fb.float32 else 1e-10
    np.testing.assert_allclose(out.detach().numpy(), ref.numpy(), rtol=tol, atol=tol)
    g = t(RNG.standard_normal((rows, n)), dtype)
    out.backward(g)
    xc = x.detach().clone().requires_grad_()
    wc = w.detach().clone().requires_grad_() if weighted else None
    M.layer_norm(xc, (n,), wc)[0].backward(g)
    np.testing.assert_allclose(x.grad.numpy(), xc.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    if weighted:
        np.testing.assert_allclose(w.grad.numpy(), wc.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_layer_norm_errors():
    x = t(np.zeros((2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], "
                                           r"but got input of size\[2, 3, 4\]"):
        F.layer_norm(x, (5,))
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[3\] and normalized_shape = \[4\]"):
        F.layer_norm(x, (4,), t(np.ones(3)))
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.layer_norm(fb.zeros((2, 3), dtype=fb.int64), (3,))


# -- batch norm -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 2, 3, 2, 2)])
@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
def test_batch_norm_training_and_running_stats(shape, dtype, tol):
    x = RNG.standard_normal(shape) * 2 + 0.5
    c = shape[1]
    w, b = RNG.standard_normal(c), RNG.standard_normal(c)
    rm, rv = t(np.zeros(c), dtype), t(np.ones(c), dtype)
    got = F.batch_norm(t(x, dtype), rm, rv, t(w, dtype), t(b, dtype), training=True, momentum=0.3, eps=1e-5)
    axes = (0,) + tuple(range(2, len(shape)))
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    np.testing.assert_allclose(got.numpy(), ref_batch_norm(x, mean, var, w, b), rtol=tol * 10, atol=tol * 10)
    n = x.size // c
    np.testing.assert_allclose(rm.numpy(), 0.3 * mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(rv.numpy(), 0.7 + 0.3 * var * n / (n - 1), rtol=tol, atol=tol)


def test_batch_norm_eval_uses_running_stats():
    x = RNG.standard_normal((4, 3, 2))
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    rmt, rvt = t(rm), t(rv)
    got = F.batch_norm(t(x), rmt, rvt, t(w), t(b), training=False)
    np.testing.assert_allclose(got.numpy(), ref_batch_norm(x, rm, rv, w, b), rtol=1e-12)
    np.testing.assert_array_equal(rmt.numpy(), rm)  # not updated in evaluation
    got = M.batch_norm(t(x), t(w), t(b), rmt, rvt, False, 1e-5)[0]
    np.testing.assert_allclose(got.numpy(), ref_batch_norm(x, rm, rv, w, b), rtol=1e-12)


def test_batch_norm_without_running_stats_in_training():
    x = RNG.standard_normal((5, 2, 3))
    got = F.batch_norm(t(x), None, None, training=True)
    axes = (0, 2)
    np.testing.assert_allclose(got.numpy(), ref_batch_norm(x, x.mean(axis=axes), x.var(axis=axes)), rtol=1e-12)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training):
    x = t(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    w = t(RNG.standard_normal(2), requires_grad=True)
    b = t(RNG.standard_normal(2), requires_grad=True)
    rm, rv = t(RNG.standard_normal(2)), t(RNG.random(2) + 0.5)

    def fn(x, w, b):
        return F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=training)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_batch_norm_backward_kernel_matches_composite():
    x, g = t(RNG.standard_normal((5, 4, 6))), t(RNG.standard_normal((5, 4, 6)))
    w = t(RNG.standard_normal(4))
    for training in (True, False):
        _, mean, var = fb.ops.function("nn_batch_norm")(x, w, None, t(np.zeros(4)), t(np.ones(4)), training, 1e-5)
        got = fb.ops.function("nn_batch_norm_backward")(g, x, mean, var, w, training, 1e-5)
        want = M.batch_norm_backward(g, x, mean, var, w, training, 1e-5)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(t(np.ones((1, 3))), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(t(np.ones((2, 3))), t(np.zeros(4)), t(np.ones(3)))


# -- instance, group, RMS norm ----------------------------------------------------------------------

def test_instance_norm_matches_reference_and_updates_running_stats():
    x = RNG.standard_normal((3, 2, 5, 4))
    w, b = RNG.standard_normal(2), RNG.standard_normal(2)
    rm, rv = t(np.zeros(2)), t(np.ones(2))
    got = F.instance_norm(t(x), rm, rv, t(w), t(b), use_input_stats=True, momentum=0.5)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w.reshape(1, 2, 1, 1) + b.reshape(1, 2, 1, 1)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.5 * mean.reshape(3, 2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * (var * 20 / 19).reshape(3, 2).mean(0), rtol=1e-12)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(t(np.ones((2, 3, 1))))


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(groups):
    x = RNG.standard_normal((3, 4, 5))
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)
    got = F.group_norm(t(x), groups, t(w), t(b))
    g = x.reshape(3, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(got.numpy(), y * w.reshape(1, 4, 1) + b.reshape(1, 4, 1), rtol=1e-10, atol=1e-12)
    xg = t(x, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.group_norm(x, groups, w, b),
                     (xg, t(w, requires_grad=True), t(b, requires_grad=True)))
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(t(x), 3)


def test_rms_norm():
    x = RNG.standard_normal((3, 4, 5))
    w = RNG.standard_normal((4, 5))
    got = F.rms_norm(t(x), (4, 5), t(w), eps=1e-6)
    expected = x / np.sqrt((x ** 2).mean(axis=(1, 2), keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    # eps=None uses the dtype's machine epsilon
    xf = x.astype(np.float32)
    got = F.rms_norm(t(xf, fb.float32), (5,))
    expected = xf / np.sqrt((xf.astype(np.float64) ** 2).mean(-1, keepdims=True) + np.finfo(np.float32).eps)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)
    assert gradcheck(lambda x, w: F.rms_norm(x, (5,), w), (t(x, requires_grad=True), t(w[0], requires_grad=True)))


# -- local response norm, normalize --------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm(size):
    x = RNG.standard_normal((2, 6, 3, 2))
    got = F.local_response_norm(t(x), size, alpha=0.5, beta=0.75, k=2.0)
    sq = x ** 2
    c = x.shape[1]
    div = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        div[:, ch] = sq[:, lo:hi].sum(axis=1)
    expected = x / (2.0 + 0.5 / size * div) ** 0.75
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x: F.local_response_norm(x, size), (t(x[:1, :, :1], requires_grad=True),))
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        F.local_response_norm(t(np.ones((2, 3))), 2)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize(p, dim):
    x = RNG.standard_normal((3, 4))
    x[1] = 0
    got = F.normalize(t(x), p=p, dim=dim)
    norm = (np.abs(x) ** p).sum(axis=dim, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(got.numpy(), x / np.maximum(norm, 1e-12), rtol=1e-12)
    assert gradcheck(lambda x: F.normalize(x, p=p, dim=dim), (t(RNG.standard_normal((3, 4)), requires_grad=True),))


# -- modules ------------------------------------------------------------------------------------------

def test_batchnorm_module_running_stats_and_eval():
    from flambeau import nn

    bn = nn.BatchNorm1d(3, momentum=None)
    assert repr(bn) == "BatchNorm1d(3, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)"
    assert sorted(dict(bn.named_buffers())) == ["num_batches_tracked", "running_mean", "running_var"]
    xs = [RNG.standard_normal((4, 3)) for _ in range(3)]
    for x in xs:
        bn(t(x, fb.float32))
    assert int(bn.num_batches_tracked) == 3
    # momentum=None: the cumulative average of the batch statistics
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean([x.var(0, ddof=1) for x in xs], 0), rtol=1e-5)
    bn.eval()
    x = RNG.standard_normal((2, 3))
    expected = (x - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(bn(t(x, fb.float32)).detach().numpy(), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        bn(fb.zeros((1, 3, 1, 1)))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(fb.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(fb.zeros((1, 3)))
    bn3 = nn.BatchNorm3d(2, affine=False, track_running_stats=False)
    assert bn3.weight is None and bn3.running_mean is None
    x = RNG.standard_normal((2, 2, 2, 2, 2))
    bn3.eval()  # no running statistics: batch statistics even in evaluation
    axes = (0, 2, 3, 4)
    expected = ref_batch_norm(x, x.mean(axis=axes), x.var(axis=axes))
    np.testing.assert_allclose(bn3(t(x)).numpy(), expected, rtol=1e-10)


def test_norm_modules_parameters_and_repr():
    from flambeau import nn

    ln = nn.LayerNorm(4)
    assert ln.normalized_shape == (4,) and repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    np.testing.assert_array_equal(ln.weight.detach().numpy(), np.ones(4))
    np.testing.assert_array_equal(ln.bias.detach().numpy(), np.zeros(4))
    assert nn.LayerNorm((2, 3), bias=False).bias is None
    assert nn.BatchNorm2d(3, bias=False).bias is None and nn.GroupNorm(1, 3, bias=False).bias is None
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    out = ln(t(x, fb.float32))
    out.sum().backward()
    assert ln.weight.grad is not None and tuple(ln.weight.grad.shape) == (4,)
    gn = nn.GroupNorm(2, 4)
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    rms = nn.RMSNorm([2, 3])
    assert repr(rms) == "RMSNorm((2, 3), eps=None, elementwise_affine=True)"
    assert tuple(rms(fb.ones((4, 2, 3))).shape) == (4, 2, 3)
    inorm = nn.InstanceNorm2d(3)
    assert repr(inorm) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                           "track_running_stats=False)")
    x = RNG.standard_normal((3, 4, 5))  # unbatched (C, H, W)
    got = inorm(t(x)).detach()
    expected = (x - x.mean(axis=(1, 2), keepdims=True)) / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"


def test_lazy_norm_modules_infer_num_features():
    from flambeau import nn

    bn = nn.LazyBatchNorm2d(momentum=0.5)
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    out = bn(t(x, fb.float32))
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3
    assert tuple(bn.weight.shape) == (3,) and int(bn.num_batches_tracked) == 1
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * x.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-6)
    expected = ref_batch_norm(x.astype(np.float64), x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3)))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    inorm = nn.LazyInstanceNorm1d(affine=True)
    inorm(fb.ones((5, 7)))  # unbatched (C, L): C = 5
    assert type(inorm) is nn.InstanceNorm1d and inorm.num_features == 5 and tuple(inorm.weight.shape) == (5,)
    assert inorm.running_mean is None

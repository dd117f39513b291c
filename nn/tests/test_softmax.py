"""softmax / log_softmax (core-tensor's ops) and the functional forms and modules of the softmax family."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck


def np_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True, initial=-np.inf))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    s = x - x.max(axis=axis, keepdims=True, initial=-np.inf)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 4), -1), ((2, 3, 4), 1),
                                       ((4, 1000), -1), ((2, 0, 3), 1), ((0, 4), 1)])
def test_forward_matches_numpy(shape, dim, dtype):
    x = np.random.default_rng(0).normal(size=shape) * 5
    t = fb.tensor(x, dtype=dtype)
    rtol = 1e-5 if dtype is fb.float32 else 1e-12
    np.testing.assert_allclose(fb.softmax(t, dim).numpy(), np_softmax(x, dim), rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(fb.log_softmax(t, dim).numpy(), np_log_softmax(x, dim), rtol=rtol, atol=1e-5)
    np.testing.assert_allclose(t.softmax(dim).numpy(), np_softmax(x, dim), rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(t.log_softmax(dim).numpy(), np_log_softmax(x, dim), rtol=rtol, atol=1e-5)


def test_strided_and_transposed_input():
    x = np.random.default_rng(1).normal(size=(6, 8))
    t = fb.tensor(x).t()  # not contiguous: rows are strided
    np.testing.assert_allclose(fb.softmax(t, 1).numpy(), np_softmax(x.T, 1), rtol=1e-6)
    np.testing.assert_allclose(fb.log_softmax(t[:, ::2], -1).numpy(), np_log_softmax(x.T[:, ::2], -1), rtol=1e-6)


def test_large_values_do_not_overflow():
    t = fb.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
    got = fb.softmax(t, 1).numpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, np_softmax(np.array([[0.0, 1, 2], [0, -1, -2]]), 1), rtol=1e-6)
    assert np.isfinite(fb.log_softmax(t, 1).numpy()).all()


def test_infinities_and_nan_as_pytorch():
    t = fb.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")], [float("inf"), 0.0], [float("nan"), 0.0]])
    y = fb.softmax(t, 1).numpy()
    np.testing.assert_array_equal(y[0], [1.0, 0.0])
    assert np.isnan(y[1]).all() and np.isnan(y[2]).all() and np.isnan(y[3]).all()
    ly = fb.log_softmax(t, 1).numpy()
    assert ly[0, 0] == 0.0 and ly[0, 1] == -np.inf


def test_zero_dim_input():
    assert fb.softmax(fb.tensor(3.0), 0).item() == 1.0
    assert fb.log_softmax(fb.tensor(3.0), -1).item() == 0.0


@pytest.mark.parametrize("dtype", [fb.float16, fb.bfloat16])
def test_half_precision_accumulates_in_float32(dtype):
    x = np.random.default_rng(2).normal(size=(3, 4096)).astype(np.float32)
    y = fb.softmax(fb.tensor(x).to(dtype), 1)
    assert y.dtype is dtype
    np.testing.assert_allclose(y.float().numpy().sum(1), np.ones(3), rtol=2e-2)
    ref = np_log_softmax(fb.tensor(x).to(dtype).float().numpy(), 1)
    np.testing.assert_allclose(fb.log_softmax(fb.tensor(x).to(dtype), 1).float().numpy(), ref, rtol=1e-2, atol=5e-2)


def test_dtype_argument_casts_first():
    t = fb.tensor([[1.0, 2.0, 3.0]], dtype=fb.float32)
    y = fb.softmax(t, 1, dtype=fb.float64)
    assert y.dtype is fb.float64
    np.testing.assert_allclose(y.numpy(), np_softmax(np.array([[1.0, 2, 3]]), 1), rtol=1e-12)
    assert F.log_softmax(t, 1, dtype=fb.float64).dtype is fb.float64


def test_bad_arguments():
    with pytest.raises(IndexError, match="Dimension out of range"):
        fb.softmax(fb.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        fb.softmax(fb.tensor([1, 2]), 0)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        fb.log_softmax(fb.tensor([1, 2]), 0)


@pytest.mark.parametrize("fn", [fb.softmax, fb.log_softmax])
@pytest.mark.parametrize("shape,dim", [((4, 5), 1), ((4, 5), 0), ((2, 3, 4), 1), ((3,), 0)])
def test_gradcheck(fn, shape, dim):
    x = fb.tensor(np.random.default_rng(3).normal(size=shape), dtype=fb.float64, requires_grad=True)
    assert gradcheck(lambda t: fn(t, dim), (x,))
    assert gradgradcheck(lambda t: fn(t, dim), (x,))


def test_gradient_with_dtype_argument_comes_back_in_input_dtype():
    x = fb.randn(3, 4, requires_grad=True)
    fb.softmax(x, 1, dtype=fb.float64)[:, 0].sum().backward()
    assert x.grad.dtype is fb.float32


@pytest.mark.parametrize("name", ["_softmax_backward_data", "_log_softmax_backward_data"])
def test_backward_ops_match_composite_formula(name):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 7))
    g = rng.normal(size=(5, 7))
    y = np_softmax(x, 1) if name == "_softmax_backward_data" else np_log_softmax(x, 1)
    got = fb.ops.function(name)(fb.tensor(g), fb.tensor(y), 1).numpy()
    if name == "_softmax_backward_data":
        ref = y * (g - (g * y).sum(1, keepdims=True))
    else:
        ref = g - np.exp(y) * g.sum(1, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), data=st.data())
def test_property_rows_sum_to_one_any_dim(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).normal(size=shape) * 3
    y = fb.softmax(fb.tensor(x), dim).numpy()
    np.testing.assert_allclose(y.sum(axis=dim), np.ones_like(x.sum(axis=dim)), rtol=1e-6)
    np.testing.assert_allclose(fb.log_softmax(fb.tensor(x), dim).numpy(), np_log_softmax(x, dim % len(shape)),
                               rtol=1e-5, atol=1e-6)


# -- functional forms ------------------------------------------------------------------------------

def test_functional_softmax_softmin_log_softmax():
    x = np.random.default_rng(5).normal(size=(3, 4))
    t = fb.tensor(x)
    np.testing.assert_allclose(F.softmax(t, dim=1).numpy(), np_softmax(x, 1), rtol=1e-6)
    np.testing.assert_allclose(F.softmin(t, dim=1).numpy(), np_softmax(-x, 1), rtol=1e-6)
    np.testing.assert_allclose(F.log_softmax(t, dim=0).numpy(), np_log_softmax(x, 0), rtol=1e-6)
    assert F.softmin(t, 1, dtype=fb.float64).dtype is fb.float64


@pytest.mark.parametrize("ndim,expected_dim", [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_implicit_dim_warns_and_picks_pytorchs_dim(ndim, expected_dim):
    x = np.random.default_rng(6).normal(size=(2,) * ndim)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(fb.tensor(x))
    np.testing.assert_allclose(y.numpy(), np_softmax(x, expected_dim), rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(fb.tensor(x))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(fb.tensor(x))


def test_explicit_dim_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmax(fb.ones(2, 3), dim=1)


def test_functional_gradcheck():
    x = fb.tensor(np.random.default_rng(7).normal(size=(3, 4)), dtype=fb.float64, requires_grad=True)
    assert gradcheck(lambda t: F.softmin(t, 1), (x,))
    assert gradcheck(lambda t: F.log_softmax(t, 0), (x,))


def test_gumbel_softmax_soft_and_hard():
    fb.manual_seed(0)
    logits = fb.randn(64, 5, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.detach().numpy().sum(1), np.ones(64), rtol=1e-5)
    h = F.gumbel_softmax(logits, tau=0.5, hard=True)
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(1) == 1).all()
    # straight through: the gradient is the soft sample's, which is non-zero
    (h * fb.arange(5.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-5)


def test_gumbel_softmax_samples_follow_the_softmax():
    fb.manual_seed(1)
    logits = fb.tensor([[0.0, 1.0, 2.0]]).expand(20000, 3)
    counts = F.gumbel_softmax(logits, hard=True, dim=-1).numpy().mean(0)
    np.testing.assert_allclose(counts, np_softmax(np.array([0.0, 1, 2]), 0), atol=0.02)


# -- modules ---------------------------------------------------------------------------------------

def test_modules_match_functional_and_print_like_pytorch():
    import flambeau.nn as nn

    x = np.random.default_rng(8).normal(size=(2, 3, 4, 5))
    t = fb.tensor(x)
    np.testing.assert_allclose(nn.Softmax(dim=1)(t).numpy(), np_softmax(x, 1), rtol=1e-6)
    np.testing.assert_allclose(nn.Softmin(dim=-1)(t).numpy(), np_softmax(-x, -1), rtol=1e-6)
    np.testing.assert_allclose(nn.LogSoftmax(dim=2)(t).numpy(), np_log_softmax(x, 2), rtol=1e-6)
    np.testing.assert_allclose(nn.Softmax2d()(t).numpy(), np_softmax(x, 1), rtol=1e-6)
    np.testing.assert_allclose(nn.Softmax2d()(t[0]).numpy(), np_softmax(x[0], 0), rtol=1e-6)
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.Softmin()) == "Softmin(dim=None)"
    assert repr(nn.LogSoftmax(0)) == "LogSoftmax(dim=0)"
    assert repr(nn.Softmax2d()) == "Softmax2d()"


def test_softmax2d_wrong_rank_names_the_layer():
    import flambeau.nn as nn

    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(fb.ones(2, 3))


def test_module_without_dim_warns():
    import flambeau.nn as nn

    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        nn.Softmax()(fb.ones(2, 3))


def test_special_namespace():
    x = np.array([[1.0, 2.0, 0.5]])
    np.testing.assert_allclose(fb.special.softmax(fb.tensor(x), 1).numpy(), np_softmax(x, 1), rtol=1e-6)
    y = fb.special.log_softmax(fb.tensor(x, dtype=fb.float32), 1, dtype=fb.float64)
    assert y.dtype is fb.float64
    np.testing.assert_allclose(y.numpy(), np_log_softmax(x, 1), rtol=1e-7)

"""Dropout: the keep rate and the scale (statistically), masks from flambeau's generator, the
backward pass through the saved mask, channel-wise and alpha variants, and PyTorch's errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck

N = 200_000
ALPHA = 1.7580993408473766


def _sigmas(count: int, n: int, p: float) -> float:
    """How many standard deviations ``count`` zeros out of ``n`` lie from the expected ``n * p``."""
    return abs(count - n * p) / math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_keep_rate_and_scale(dtype, p):
    x = fb.ones(N, dtype=getattr(fb, dtype))
    y = F.dropout(x, p).float().numpy()
    dropped = int((y == 0).sum())
    assert _sigmas(dropped, N, p) < 5
    kept = y[y != 0]
    want = np.float32(fb.tensor(1 / (1 - p), dtype=getattr(fb, dtype)).float().item())
    assert np.all(kept == want)  # one rounding of 1 / (1 - p) into the dtype


def test_mask_covers_a_strided_input():
    x = fb.ones(300, 400).t()
    y = F.dropout(x, 0.25)
    assert y.shape == (400, 300)
    assert _sigmas(int((y == 0).sum().item()), 120_000, 0.25) < 5


def test_same_seed_same_mask_and_kernel_equals_composite():
    x = fb.ones(1000)
    fb.manual_seed(11)
    a = F.dropout(x, 0.3)
    fb.manual_seed(11)
    b = F.dropout(x, 0.3)
    assert (a == b).all()
    fb.manual_seed(12)
    assert not (F.dropout(x, 0.3) == a).all()
    # the fused CPU kernel draws what the composite (bernoulli(1 - p), scaled) draws
    decl = fb.ops.declarations()["_dropout_mask"]
    for dtype in (fb.float32, fb.float64, fb.float16):
        t = fb.ones(5000, dtype=dtype)
        fb.manual_seed(3)
        kernel = fb.ops.function("_dropout_mask")(t, 0.3)
        fb.manual_seed(3)
        composite = decl.composite(t, 0.3)
        assert (kernel == composite).all()
    gen = fb.Generator().manual_seed(8)
    first = fb.ops.function("_dropout_mask")(x, 0.5, generator=gen)
    gen.manual_seed(8)
    assert (first == fb.ops.function("_dropout_mask")(x, 0.5, generator=gen)).all()


def test_backward_multiplies_by_the_mask():
    x = fb.tensor(np.random.default_rng(0).normal(size=(50, 40)), requires_grad=True)
    y = F.dropout(x, 0.4)
    g = fb.tensor(np.random.default_rng(1).normal(size=(50, 40)))
    y.backward(g)
    mask = (y / x).detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), g.numpy() * mask, rtol=1e-12)
    assert set(np.round(np.unique(mask), 9)) <= {0.0, round(1 / 0.6, 9)}


def test_gradcheck_with_a_fixed_seed():
    x = fb.tensor(np.random.default_rng(2).normal(size=(3, 4)), requires_grad=True)

    def fn(t):
        fb.manual_seed(4)  # the same mask at every evaluation
        return F.dropout(t, 0.3)

    assert gradcheck(fn, (x,))

    def alpha(t):
        fb.manual_seed(4)
        return F.alpha_dropout(t, 0.3, training=True)

    assert gradcheck(alpha, (x,))
    x4 = fb.tensor(np.random.default_rng(3).normal(size=(2, 3, 2, 2)), requires_grad=True)

    def channels(t):
        fb.manual_seed(4)
        return F.dropout2d(t, 0.5)

    assert gradcheck(channels, (x4,))


def test_eval_mode_and_edge_probabilities():
    x = fb.randn(10, 10)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.alpha_dropout(x, 0.5) is x  # alpha dropout's training flag defaults to False, as in PyTorch
    assert (F.dropout(x, 0.0) == x).all()
    assert (F.dropout(x, 1.0) == 0).all()
    assert F.dropout(fb.ones(0, 3), 0.5).shape == (0, 3)


@pytest.mark.parametrize("call", [F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                                  F.feature_alpha_dropout])
@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_probability_checked(call, p):
    with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
        call(fb.ones(2, 3, 4, 5), p)


def test_tensor_namespace_checks_p_too():
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        fb.dropout(fb.ones(3), 1.5, True)


def test_inplace():
    x = fb.ones(1000)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    x = fb.ones(4, 8, 3)
    F.dropout1d(x, 0.5, inplace=True)
    channel_values = x.numpy().reshape(32, 3)
    assert np.all(channel_values.min(1) == channel_values.max(1))


@pytest.mark.parametrize("call,shape,channel", [
    (F.dropout1d, (8, 64, 5), 5), (F.dropout1d, (64, 5), 5), (F.dropout2d, (8, 64, 3, 3), 9),
    (F.dropout2d, (64, 3, 3), 3),  # 3-D input to dropout2d is (N, C, L), as PyTorch still reads it
    (F.dropout3d, (8, 64, 2, 2, 2), 8), (F.dropout3d, (64, 2, 2, 2), 8)])
def test_channel_dropout_drops_whole_channels(call, shape, channel):
    x = fb.ones(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = call(x, 0.5).numpy()
    channels = y.reshape(-1, channel)
    assert np.all(channels.min(1) == channels.max(1))  # each channel all kept or all dropped
    assert set(np.unique(channels)) <= {0.0, 2.0}
    assert 0 < (channels[:, 0] == 0).mean() < 1


def test_channel_dropout_shape_errors_and_warnings():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(fb.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
        F.dropout2d(fb.ones(4, 5))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d"):
        F.dropout3d(fb.ones(4, 5, 6))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        fb.feature_dropout(fb.ones(4), 0.5, True)


def test_alpha_dropout_keeps_mean_and_variance():
    fb.manual_seed(0)
    x = fb.randn(N, dtype=fb.float64)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    a = 1 / math.sqrt((ALPHA ** 2 * 0.2 + 1) * 0.8)
    dropped_value = -ALPHA * a + ALPHA * a * 0.2
    dropped = np.isclose(y, dropped_value, rtol=0, atol=1e-12)
    assert _sigmas(int(dropped.sum()), N, 0.2) < 5
    kept = ~dropped
    np.testing.assert_allclose(y[kept], x.numpy()[kept] * a + ALPHA * a * 0.2, rtol=1e-12)


def test_feature_alpha_dropout_sets_whole_channels():
    fb.manual_seed(1)
    y = F.feature_alpha_dropout(fb.randn(16, 32, 4), 0.5, training=True).numpy().reshape(512, 4)
    a = 1 / math.sqrt((ALPHA ** 2 * 0.5 + 1) * 0.5)
    dropped = np.all(np.isclose(y, -ALPHA * a + ALPHA * a * 0.5, atol=1e-6), axis=1)
    assert 0.3 < dropped.mean() < 0.7

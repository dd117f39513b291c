"""The activation and dropout functions PyTorch keeps in its tensor namespace: names, methods, values."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb


def test_namespace_and_methods():
    for name in ("relu", "relu_", "threshold", "threshold_", "hardshrink", "selu", "selu_", "celu", "celu_", "prelu",
                 "rrelu", "rrelu_", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
                 "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_"):
        assert callable(getattr(fb, name)), name
    x = fb.tensor([-1.0, 0.5])
    assert x.relu().tolist() == [0.0, 0.5]
    assert x.hardshrink(0.7).tolist() == [-1.0, 0.0]
    assert x.prelu(fb.tensor([0.5])).tolist() == [-0.5, 0.5]
    assert x.relu_() is x and x.tolist() == [0.0, 0.5]


def test_values():
    x = fb.tensor([-2.0, -0.5, 0.0, 1.0, float("nan")], dtype=fb.float64)
    v = x.numpy()
    assert np.array_equal(fb.relu(x).numpy(), np.where(v <= 0, 0.0, v), equal_nan=True)
    np.testing.assert_allclose(fb.threshold(x, 0.0, 7.0).numpy(), np.where(v > 0, v, 7.0)[:4].tolist() + [math.nan])
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(fb.selu(x).numpy()[:4], scale * np.where(v > 0, v, alpha * np.expm1(v))[:4])
    np.testing.assert_allclose(fb.celu(x, 2.0).numpy()[:4], np.where(v > 0, v, 2.0 * np.expm1(v / 2.0))[:4])
    y = x.clone()
    assert fb.selu_(y) is y


def test_dropout_in_the_tensor_namespace():
    x = fb.ones(10_000)
    assert fb.dropout(x, 0.5, False) is x
    y = fb.dropout(x, 0.5, True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.45 < (y == 0).mean() < 0.55
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got -0.5"):
        fb.dropout(x, -0.5, True)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        fb.dropout(fb.ones(3, dtype=fb.int64), 0.5, True)

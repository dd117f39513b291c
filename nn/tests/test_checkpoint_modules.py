"""flambeau.utils.checkpoint with modules: parameters get the gradients of the plain run, dropout
replays the same mask, and the non-reentrant mode records a graph even when no input requires grad."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn as nn
from flambeau.utils.checkpoint import checkpoint, checkpoint_sequential


def model():
    fb.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16), nn.Tanh(),
                         nn.Dropout(0.3), nn.Linear(16, 2))


def grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_module_gradients_equal_plain(use_reentrant):
    m = model()
    x = fb.randn(5, 6, requires_grad=True)
    fb.manual_seed(3)
    m(x).pow(2).sum().backward()
    expected, gx = grads(m), x.grad.numpy().copy()
    m.zero_grad()
    x.grad = None
    fb.manual_seed(3)
    checkpoint_sequential(m, 2, x, use_reentrant=use_reentrant).pow(2).sum().backward()
    for g, e in zip(grads(m), expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6, atol=1e-7)


def test_non_reentrant_reaches_parameters_when_no_input_requires_grad():
    m = model()
    x = fb.randn(5, 6)
    fb.manual_seed(3)
    m(x).sum().backward()
    expected = grads(m)
    m.zero_grad()
    fb.manual_seed(3)
    out = checkpoint(m, x, use_reentrant=False)
    assert out.requires_grad
    out.sum().backward()
    for g, e in zip(grads(m), expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_checkpointed_transformer_layer():
    fb.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2)
    x = fb.randn(4, 3, 8, requires_grad=True)
    fb.manual_seed(9)
    layer(x).sum().backward()
    expected = grads(layer)
    layer.zero_grad()
    fb.manual_seed(9)
    checkpoint(layer, x, use_reentrant=False).sum().backward()
    for g, e in zip(grads(layer), expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)

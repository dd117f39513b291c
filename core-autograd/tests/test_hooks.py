"""Tensor hooks, post-accumulate hooks, node hooks."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb


def test_leaf_hook_can_replace_gradient_and_be_removed():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: (seen.append(g.numpy().copy()), g * 2)[1])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_non_leaf_hook_changes_downstream():
    x = fb.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    (y * 1).sum().backward()
    assert x.grad.item() == 20.0


def test_hook_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        fb.tensor([1.0]).register_hook(lambda g: g)


def test_post_accumulate_grad_hook():
    x = fb.tensor([1.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.item()))
    (x * 4).sum().backward()
    assert seen == [4.0]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda gout: calls.append(("pre", gout[0].numpy().tolist())))
    y.grad_fn.register_hook(lambda gin, gout: (calls.append(("post", gin[0].numpy().tolist())), (gin[0] * 0,))[1])
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [3.0, 3.0])]
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])

"""Inference tensors meet autograd; tensor hooks that change a gradient's dtype, device or shape.

PyTorch's behaviour is the spec: an inference tensor is never saved for backward and never gets
``requires_grad`` outside inference mode; a tensor hook may replace the gradient only with a tensor
of the same type and size.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau import autograd

_SAVE = "Inference tensors cannot be saved for backward"


def test_autograd_uses_core_tensors_grad_state():
    from flambeau import _grad_mode
    from flambeau.autograd import grad_mode

    assert grad_mode.STATE is _grad_mode.STATE  # one state, not a copy
    assert autograd.no_grad is fb.no_grad and autograd.inference_mode is fb.inference_mode
    x = fb.ones(2, requires_grad=True)
    _grad_mode.STATE.enabled = False
    try:
        assert not (x * 2).requires_grad
    finally:
        _grad_mode.STATE.enabled = True


def test_inference_tensor_cannot_be_saved_for_backward():
    x = fb.ones(3, requires_grad=True)
    with fb.inference_mode():
        i = fb.full((3,), 2.0)
    with pytest.raises(RuntimeError, match=_SAVE):
        x * i  # mul saves both inputs
    with pytest.raises(RuntimeError, match=_SAVE):
        i[1:] * x[1:]  # a view of an inference tensor is one too
    y = x + i  # add saves nothing: allowed, as in PyTorch
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    z = x * i.clone()  # the documented way out
    z.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_inference_tensor_cannot_require_grad_outside_inference_mode():
    with fb.inference_mode():
        i = fb.ones(2)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        i.requires_grad_()
    assert not i.requires_grad
    i.requires_grad_(False)  # turning it off is fine


def test_inference_mode_records_nothing_and_false_turns_grad_on():
    x = fb.ones(2, requires_grad=True)
    with fb.inference_mode():
        y = x * 2
        assert not fb.is_grad_enabled() and fb.is_inference_mode_enabled()
        assert not y.requires_grad and y.is_inference() and fb.is_inference(y)
        with fb.inference_mode(False):  # PyTorch: grad mode on again, inference mode off
            assert fb.is_grad_enabled() and not fb.is_inference_mode_enabled()
            z = x * 2
            assert z.requires_grad and not z.is_inference()
    with fb.no_grad(), fb.inference_mode(False):
        assert fb.is_grad_enabled()
    assert fb.is_grad_enabled() and not fb.is_inference_mode_enabled()


def test_inplace_on_inference_tensor_outside_mode_raises_even_with_grad():
    with fb.inference_mode():
        i = fb.zeros(2)
    x = fb.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        i.add_(x)
    assert i.tolist() == [0.0, 0.0]


# -- hooks -----------------------------------------------------------------------------------

def _leaf_and_nonleaf():
    x = fb.ones(3, requires_grad=True)
    return x, x * 1


@pytest.mark.parametrize("on_leaf", [True, False], ids=["leaf", "non_leaf"])
def test_hook_changing_dtype_raises(on_leaf):
    x, y = _leaf_and_nonleaf()
    (x if on_leaf else y).register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was flambeau.FloatTensor "
                                           r"got flambeau.DoubleTensor\)"):
        y.sum().backward()
    assert x.grad is None  # nothing accumulated


@pytest.mark.parametrize("on_leaf", [True, False], ids=["leaf", "non_leaf"])
def test_hook_changing_shape_raises(on_leaf):
    x, y = _leaf_and_nonleaf()

    def shrink(g):
        return g[:2]

    (x if on_leaf else y).register_hook(shrink)
    with pytest.raises(RuntimeError, match="hook 'shrink' has changed the size of value"):
        y.sum().backward()
    x, y = _leaf_and_nonleaf()
    (x if on_leaf else y).register_hook(lambda g: g.reshape(3, 1))  # same elements, another shape
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()


def test_hook_returning_a_non_tensor_raises_type_error():
    x, y = _leaf_and_nonleaf()
    y.register_hook(lambda g: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        y.sum().backward()


def test_hook_on_the_meta_device_changing_device_raises():
    pytest.importorskip("flambeau_meta")
    x, y = _leaf_and_nonleaf()
    y.register_hook(lambda g: fb.empty(3, device="meta"))
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was CPU tensor got META tensor\)"):
        y.sum().backward()


def test_hook_with_same_type_and_shape_still_replaces_the_gradient():
    x, y = _leaf_and_nonleaf()
    y.register_hook(lambda g: g * 3)
    x.register_hook(lambda g: g + 1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])

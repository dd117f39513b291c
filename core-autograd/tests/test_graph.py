"""Graph recording: grad_fn, is_leaf, requires_grad, retain_grad, detach, leaf accumulation."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as fb


def test_grad_fn_names_and_repr():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    y = x + 1
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert repr(y) == "tensor([2., 3.], grad_fn=<AddBackward0>)"
    assert type((x * x).grad_fn).__name__ == "MulBackward0"
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    assert y.grad_fn.name() == "AddBackward0"


def test_next_functions_point_to_accumulate_grad():
    x = fb.tensor([1.0], requires_grad=True)
    w = fb.tensor([2.0])
    y = x * w
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and nr == 0
    assert none is None
    z = y * y
    assert z.grad_fn.next_functions[0][0] is y.grad_fn


def test_is_leaf_and_requires_grad():
    x = fb.tensor([1.0], requires_grad=True)
    c = fb.tensor([1.0])
    assert x.is_leaf and c.is_leaf
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    z = c * 2
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None


def test_requires_grad_errors():
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        fb.tensor([1, 2]).requires_grad_()
    y = fb.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y.requires_grad_(True)  # a no-op on a non-leaf


def test_requires_grad_setter_and_factories():
    x = fb.zeros(2)
    x.requires_grad = True
    assert x.requires_grad
    assert fb.ones(2, requires_grad=True).requires_grad


def test_leaves_accumulate():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3 + 2, 3 + 4])
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_shared_gradients_are_not_aliased():
    a = fb.tensor([1.0], requires_grad=True)
    b = fb.tensor([1.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(10)
    assert b.grad.item() == 1.0


def test_non_leaf_grad_warns():
    y = fb.tensor([1.0], requires_grad=True) * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_retain_grad():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])
    x.retain_grad()  # no-op on leaves


def test_detach_shares_data_and_version():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 5.0
    assert y[0].item() == 5.0
    assert y._version_counter[0] == d._version_counter[0] == 1


def test_detach_():
    x = fb.tensor([1.0], requires_grad=True)
    y = x * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_assigning_grad_checks():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = fb.tensor([1.0])
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = fb.tensor([1.0, 2.0], dtype=fb.float64)
    x.grad = fb.tensor([1.0, 1.0])
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    x.grad = None
    assert x.grad is None


def test_multi_output_op_output_nr():
    x = fb.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    values, indices = fb.max(x, 1)
    assert values.grad_fn is not None and values.output_nr == 0
    values.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1], [1, 0]])


def test_grad_mode_off_records_nothing():
    x = fb.tensor([1.0], requires_grad=True)
    with fb.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None


def test_device_copy_records():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("cpu")
    assert y is x or y.requires_grad


def test_out_argument_refuses_autograd():
    x = fb.tensor([1.0], requires_grad=True)
    out = fb.empty(1)
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=... arguments don't support automatic "
                                           "differentiation, but one of the arguments requires grad."):
        fb.add(x, 1, out=out)
    with fb.no_grad():
        fb.add(x, 1, out=out)
    assert out.item() == 2.0


def test_retain_grad_survives_inplace():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.add_(1)
    (y * 3).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])

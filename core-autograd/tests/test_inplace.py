"""In-place correctness: leaf errors, version-counter checks, history rebasing on views."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck


def test_inplace_on_leaf_requiring_grad_raises():
    x = fb.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError,
                       match="a leaf Variable that requires grad is being used in an in-place operation."):
        x.add_(1)
    assert x.item() == 1.0
    with fb.no_grad():
        x.add_(1)
    assert x.item() == 2.0


def test_inplace_on_view_of_leaf_raises():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x[0].mul_(2)


def test_modified_saved_tensor_raises_at_backward():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.exp()  # saves its output
    z.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[flambeau.FloatTensor \[2\]\], which is output "
                                           r"0 of ExpBackward0, is at version 1; expected version 0 instead."):
        z.sum().backward()


def test_modified_saved_input_raises_at_backward():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x + 0
    z = y * y
    y.mul_(3)
    with pytest.raises(RuntimeError, match=r"\[flambeau.FloatTensor \[2\]\], which is output 0 of MulBackward0, is "
                                           r"at version 1; expected version 0 instead"):
        z.sum().backward()


def test_inplace_history():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(x)  # y = x * x, needs the old y for x's gradient
    y.add_(1)
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_inplace_on_view_rebases_base():
    x = fb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x * 1
    view = base[1:]
    view.mul_(10)
    assert type(base.grad_fn).__name__ == "CopySlices"
    assert not view.is_leaf
    base.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 10.0, 10.0])


def test_inplace_on_view_with_grad_requiring_value():
    w = fb.tensor([2.0, 3.0], requires_grad=True)
    z = fb.zeros(2, 3)
    z[:, 1] = w * 2
    assert z.requires_grad and not z.is_leaf
    (z * fb.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 10.0])


def test_inplace_on_view_gradcheck(rng):
    x = fb.tensor(rng.uniform(0.5, 1.5, size=(3, 4)), dtype=fb.float64, requires_grad=True)
    w = fb.tensor(rng.uniform(0.5, 1.5, size=(4,)), dtype=fb.float64, requires_grad=True)

    def fn(a, b):
        c = a.clone()
        c[1].mul_(b)
        c.t()[2].exp_()
        return c

    assert gradcheck(fn, (x, w))
    assert fb.autograd.gradgradcheck(fn, (x, w))


def test_view_then_read_after_rebase():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    v = b[:1]
    v.add_(5)
    (v * v).sum().backward()  # v's history goes through the updated base
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 0.0])


def test_older_view_sees_inplace_on_base():
    a = fb.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    v = x[:1]
    x.mul_(3)  # v's values changed through its base: its history must follow
    (v * 1).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 0.0])


def test_older_view_sees_inplace_on_sibling_view():
    a = fb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1
    v1 = x[0:2]
    v2 = x[1:3]
    v2.mul_(10)
    v1.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 10.0, 0.0])

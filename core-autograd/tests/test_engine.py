"""The engine: backward() and grad() arguments, order, broadcasting, graph freeing, higher order."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import backward, grad


def test_scalar_backward_and_gradient_argument():
    x = fb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(fb.tensor([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 0.0])


def test_non_scalar_backward_needs_gradient():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    assert x.grad is None


def test_wrong_shaped_gradient():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"flambeau.Size\(\[3\]\) and output\[0\] has a shape of "
                                           r"flambeau.Size\(\[2\]\)."):
        (x * 2).backward(fb.ones(3))
    assert x.grad is None


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        fb.tensor([1.0]).sum().backward()


def test_broadcast_gradients_reduced():
    a = fb.tensor(np.ones((2, 3, 4)), requires_grad=True)
    b = fb.tensor(np.ones((3, 1)), requires_grad=True)
    c = fb.tensor(2.0, requires_grad=True)
    (a * b * c).sum().backward()
    assert tuple(b.grad.shape) == (3, 1) and tuple(c.grad.shape) == ()
    np.testing.assert_allclose(b.grad.numpy(), np.full((3, 1), 16.0))
    assert c.grad.item() == 24.0


def test_gradient_dtype_matches_input():
    a = fb.tensor([1.0, 2.0], dtype=fb.float32, requires_grad=True)
    b = fb.tensor([3.0, 4.0], dtype=fb.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == fb.float32 and b.grad.dtype == fb.float64


def test_long_chain_is_iterative():
    x = fb.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0
    del y  # freeing a deep graph must not overflow either


def test_diamond_accumulates_in_buffers():
    x = fb.tensor([3.0], requires_grad=True)
    y = x * 2
    z = y * y + y  # y used twice
    z.backward()
    assert x.grad.item() == (2 * 6 + 1) * 2


def test_second_backward_raises_after_free():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def test_graph_without_saved_tensors_can_run_twice():
    x = fb.tensor([1.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0


def test_create_graph_higher_order():
    x = fb.tensor(2.0, dtype=fb.float64, requires_grad=True)
    y = x ** 4
    (g1,) = grad(y, x, create_graph=True)
    (g2,) = grad(g1, x, create_graph=True)
    (g3,) = grad(g2, x)
    assert (g1.item(), g2.item(), g3.item()) == (32.0, 48.0, 48.0)
    y2 = x.sin() * x
    y2.backward(create_graph=True)
    gx = x.grad
    assert gx.requires_grad
    x.grad = None
    gx.backward()
    np.testing.assert_allclose(x.grad.item(), 2 * np.cos(2.0) - 2 * np.sin(2.0))


def test_grad_does_not_touch_dot_grad():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    w = fb.tensor([3.0, 4.0], requires_grad=True)
    (gx,) = grad((x * w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    assert x.grad is None and w.grad is None


def test_grad_allow_unused_and_materialize():
    x = fb.tensor([1.0], requires_grad=True)
    u = fb.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors appears to not have been used in the "
                                           "graph. Set allow_unused=True if this is the desired behavior."):
        grad(y, (x, u), retain_graph=True)
    gx, gu = grad(y, (x, u), allow_unused=True, retain_graph=True)
    assert gu is None and gx.item() == 2.0
    gx, gu = grad(y, (x, u), materialize_grads=True)
    assert gu.item() == 0.0


def test_grad_with_respect_to_non_leaf():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = grad(y, h)
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])


def test_backward_inputs_restricts_accumulation():
    x = fb.tensor([1.0], requires_grad=True)
    w = fb.tensor([2.0], requires_grad=True)
    h = x * w
    (h * h).sum().backward(inputs=[w, h])
    assert x.grad is None
    assert w.grad.item() == 2 * 2 * 1 * 1
    assert h.grad.item() == 4.0


def test_multiple_roots():
    x = fb.tensor([1.0], requires_grad=True)
    backward([(x * 2).sum(), (x * 3).sum()], [None, fb.tensor(2.0)])
    assert x.grad.item() == 8.0


def test_error_midway_leaves_grads_unchanged():
    class Bad(fb.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            return fb.ones(5)

    x = fb.tensor([1.0, 2.0], requires_grad=True)
    w = fb.tensor([1.0, 2.0], requires_grad=True)
    x.grad = fb.tensor([7.0, 7.0])
    y = (x * w).sum() + Bad.apply(w).sum()
    with pytest.raises(RuntimeError, match=r"Function BadBackward returned an invalid gradient at index 0 - got \[5\] "
                                           r"but expected shape compatible with \[2\]"):
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 7.0])
    assert w.grad is None


def test_tensor_backward_inputs_argument():
    x = fb.tensor([1.0], requires_grad=True)
    w = fb.tensor([2.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.item() == 2.0 and w.grad is None


def test_missing_formula_raises_at_backward():
    from flambeau.autograd._graph import OpInfo
    from flambeau.ops._registry import OPS

    x = fb.tensor([1.0], requires_grad=True)
    y = x * 2
    info = OpInfo(OPS["mul"])
    info.formula = None
    y.grad_fn._info = info
    with pytest.raises(RuntimeError, match="the derivative for 'mul' is not implemented."):
        y.sum().backward()


def test_root_gradient_dtype_is_cast():
    x = fb.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(fb.tensor([1.0, 1.0], dtype=fb.float64))
    assert x.grad.dtype == fb.float32

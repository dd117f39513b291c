"""Custom ``flambeau.autograd.Function``."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import Function, gradcheck, gradgradcheck, once_differentiable


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


class MulConst(Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_function_forward_backward_and_name():
    x = fb.tensor([0.0, 1.0], dtype=fb.float64, requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert repr(y).endswith("grad_fn=<ExpBackward>)")
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))
    assert gradcheck(Exp.apply, (x,)) and gradgradcheck(Exp.apply, (x,))


def test_setup_context_form():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64, requires_grad=True)
    MulConst.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    assert gradcheck(lambda t: MulConst.apply(t, 2.5), (x,))


def test_needs_input_grad_and_no_record_without_grad():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            assert not fb.is_grad_enabled()
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    a = fb.tensor([1.0], requires_grad=True)
    b = fb.tensor([1.0])
    assert F.apply(a, b).requires_grad
    assert seen == [(True, False)]
    assert not F.apply(b, b).requires_grad


def test_mark_non_differentiable_and_materialize():
    class DoubleWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g_out, g_idx):
            assert g_idx is None  # integer outputs get no gradient to materialize
            return g_out * 2

    x = fb.tensor([3.0, 1.0, 2.0], requires_grad=True)
    out, idx = DoubleWithIndex.apply(x)
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_materialized_zero_gradient_for_unused_output():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert float(g2.abs().sum()) == 0.0  # materialized as zeros
            return g1 + g2 * 2

    x = fb.tensor([1.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert x.grad.item() == 1.0


def test_set_materialize_grads_false():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1

    x = fb.tensor([1.0], requires_grad=True)
    a, b = Two.apply(x)
    a.sum().backward()
    assert x.grad.item() == 1.0


def test_mark_dirty():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = fb.tensor([1.0], requires_grad=True)
    y = x * 1
    z = AddOne.apply(y)
    assert z is y and type(y.grad_fn).__name__ == "AddOneBackward"
    z.sum().backward()
    assert x.grad.item() == 1.0
    with pytest.raises(RuntimeError,
                       match="a leaf Variable that requires grad has been used in an in-place operation."):
        AddOne.apply(fb.tensor([1.0], requires_grad=True))


def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = fb.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number of gradients "
                                           r"\(expected 1, got 2\)"):
        Bad.apply(x).sum().backward()
    assert x.grad is None


def test_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = fb.tensor([3.0], requires_grad=True)
    go = fb.tensor([1.0], requires_grad=True)  # a cotangent that requires grad makes the result recordable
    (g,) = fb.autograd.grad(Square.apply(x), x, go, create_graph=True)
    assert g.item() == 6.0
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = fb.tensor([1.0], requires_grad=True)
    y = Exp.apply(x)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node.saved_tensors

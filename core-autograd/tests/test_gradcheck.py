"""gradcheck / gradgradcheck themselves: they must fail on wrong gradients, with PyTorch's report."""
from __future__ import annotations

import pytest

import flambeau as fb
from flambeau.autograd import Function, GradcheckError, gradcheck, gradgradcheck


class WrongExp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # wrong on purpose


class RightForwardWrongSecond(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.detach() * 2  # right value, but not differentiable with respect to x


def _x():
    return fb.tensor([0.5, 1.5], dtype=fb.float64, requires_grad=True)


def test_gradcheck_reports_mismatch():
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        gradcheck(WrongExp.apply, (_x(),))
    assert gradcheck(WrongExp.apply, (_x(),), raise_exception=False) is False
    assert issubclass(GradcheckError, RuntimeError)


def test_gradgradcheck_catches_wrong_second_derivative():
    assert gradcheck(RightForwardWrongSecond.apply, (_x(),))
    with pytest.raises(GradcheckError):
        gradgradcheck(RightForwardWrongSecond.apply, (_x(),))


def test_gradcheck_warns_for_single_precision_and_needs_an_input():
    x = fb.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2)
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (fb.tensor([1.0], dtype=fb.float64),))

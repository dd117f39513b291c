"""A leaf's first gradient becomes its ``.grad`` without a copy when nothing else can reach it.

PyTorch's AccumulateGrad keeps ("steals") a gradient that no other tensor references; copying it
instead cost as much as the backward kernel that made it on large parameters. These tests pin
both sides: what nobody else holds is kept (the data pointer of the kernel's result is the
``.grad``'s), and every way a gradient can still be reached elsewhere (the caller's tensor, a
view, ``detach``, a numpy array it came from, a hook or ``autograd.grad``'s capture) gets a copy,
so a later write into either side is never seen by the other.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import Function


class _Double(Function):
    """y = 2 x; backward records the data pointer of the gradient it returns."""

    pointers: list[int] = []

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        r = g * 2
        _Double.pointers.append(r.data_ptr())
        return r


def test_fresh_gradient_is_kept():
    _Double.pointers.clear()
    x = fb.randn(64, 32, requires_grad=True)
    _Double.apply(x).backward(fb.ones(64, 32))
    assert x.grad.data_ptr() == _Double.pointers[0]
    assert x.grad._base is None and not x.grad.requires_grad and x.grad.grad_fn is None
    np.testing.assert_array_equal(x.grad.numpy(), np.full((64, 32), 2, np.float32))


def test_reduction_view_of_a_private_base_is_kept_as_a_plain_tensor():
    # the bias gradient of x @ w + b is a reshaped sum: a view whose base nothing else holds
    x = fb.randn(16, 8)
    w = fb.randn(8, 4, requires_grad=True)
    b = fb.randn(4, requires_grad=True)
    (x @ w + b).sum().backward()
    assert b.grad._base is None
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 16, np.float32))
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(x.numpy().sum(0)[:, None], 4, 1), rtol=1e-5)
    b.grad.add_(1)  # nobody else sees it
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 17, np.float32))


def _grad_of_identity(make_grad):
    """x.grad after (x + 0).backward(g) for the g that make_grad returns with whatever keeps it reachable."""
    x = fb.zeros(8, 4, requires_grad=True)
    g, keep = make_grad()
    (x + 0).backward(g)
    return x, keep


def _caller_holds():
    g = fb.ones(8, 4)
    return g, g


def _view():
    big = fb.ones(16, 4)
    return big[:8], big


def _detached():
    g = fb.ones(8, 4)
    return g.detach(), g


def _from_numpy():
    a = np.ones((8, 4), np.float32)
    return fb.from_numpy(a), a


def _from_numpy_reshaped():
    a = np.ones(32, np.float32)
    return fb.from_numpy(a).reshape(8, 4), a


@pytest.mark.parametrize("make_grad", [_caller_holds, _view, _detached, _from_numpy, _from_numpy_reshaped],
                         ids=lambda f: f.__name__.strip("_"))
def test_gradient_reachable_elsewhere_is_copied(make_grad):
    x, keep = _grad_of_identity(make_grad)
    if isinstance(keep, np.ndarray):
        keep += 5
    else:
        keep.add_(5)
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((8, 4), np.float32))
    x.grad.add_(1)
    assert float(np.asarray(keep if isinstance(keep, np.ndarray) else keep.numpy()).max()) == 6.0


def test_gradient_seen_by_a_hook_is_copied():
    seen = []
    x = fb.randn(8, 4, requires_grad=True)
    x.register_hook(lambda g: seen.append(g))
    _Double.apply(x).backward(fb.ones(8, 4))
    seen[0].add_(100)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((8, 4), 2, np.float32))


def test_captured_gradient_is_not_shared_with_the_leaf():
    x = fb.randn(8, 4, requires_grad=True)
    y = _Double.apply(x)
    (gx,) = fb.autograd.grad(y, x, fb.ones(8, 4), retain_graph=True)
    y.backward(fb.ones(8, 4))
    gx.add_(100)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((8, 4), 2, np.float32))


def test_second_accumulation_adds_into_the_kept_gradient():
    x = fb.randn(8, 4, requires_grad=True)
    _Double.apply(x).backward(fb.ones(8, 4))
    first = x.grad
    _Double.apply(x).backward(fb.ones(8, 4))
    assert x.grad is first
    np.testing.assert_array_equal(x.grad.numpy(), np.full((8, 4), 4, np.float32))


def test_non_contiguous_leaf_gets_a_gradient_laid_out_like_it():
    x = fb.randn(4, 8).t().detach().requires_grad_()
    _Double.apply(x).backward(fb.ones(8, 4))
    np.testing.assert_array_equal(x.grad.numpy(), np.full((8, 4), 2, np.float32))
    assert x.grad.stride() == x.stride()

"""``detach()`` of a view shares storage (``_base`` is kept) but, as in PyTorch, is no differentiable
view: in-place ops on it behave as on a fresh leaf and never rewrite the history of the tensor it
was detached from."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb

LEAF = "^a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "^a view of a leaf Variable that requires grad is being used in an in-place operation."


def _noncontig_leaf():
    t = fb.randn(3, 4, dtype=fb.float64)
    return t, t.t().detach().requires_grad_()


@pytest.mark.parametrize("write,message", [
    (lambda x: x.copy_(fb.ones(4, 3, dtype=fb.float64)), LEAF), (lambda x: x.mul_(2), LEAF),
    (lambda x: x.add_(1.0), LEAF),
    (lambda x: x.__setitem__(0, 5.0), VIEW_OF_LEAF),  # x[0] is a view of the leaf x, as in PyTorch
])
def test_inplace_on_detached_noncontiguous_leaf_is_refused(write, message):
    t, x = _noncontig_leaf()
    assert x._base is not None and x.is_leaf  # it still shares t's storage
    before = t.numpy().copy()
    with pytest.raises(RuntimeError, match=message):
        write(x)
    assert x.grad_fn is None and np.array_equal(t.numpy(), before)


def test_inplace_on_detached_leaf_allowed_under_no_grad_and_shares_storage():
    t, x = _noncontig_leaf()
    with fb.no_grad():
        x.mul_(2)
    assert x.grad_fn is None and x.is_leaf
    np.testing.assert_array_equal(x.detach().numpy(), t.t().numpy())  # written through to t


def test_view_of_detached_leaf_is_a_view_of_that_leaf():
    w = fb.randn(3, 3, dtype=fb.float64)  # the storage base does not require grad
    x = w.t().detach().requires_grad_()
    z = x[0]
    with pytest.raises(RuntimeError, match=VIEW_OF_LEAF):
        z.mul_(2)


def test_inplace_on_detached_alias_records_on_the_alias_not_the_base():
    t = fb.randn(3, 4, dtype=fb.float64)
    k = fb.randn(4, 3, dtype=fb.float64, requires_grad=True)
    u = t.t().detach()
    u.mul_(k)
    assert type(u.grad_fn).__name__ == "MulBackward0"
    assert t.grad_fn is None and not t.requires_grad  # t's history is not rewritten
    u.sum().backward()
    np.testing.assert_allclose(k.grad.numpy(), (u.detach() / k.detach()).numpy())


def test_data_of_a_view_is_no_differentiable_view():
    w = fb.randn(3, 4, dtype=fb.float64, requires_grad=True)
    v = w.t().data.requires_grad_()
    with pytest.raises(RuntimeError, match=LEAF):
        v.mul_(2)

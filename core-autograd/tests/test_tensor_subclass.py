"""Instances of Tensor subclasses (flambeau.nn.Parameter is one) are graph inputs like plain tensors.

The recorder's fast paths test ``x.__class__ is Tensor``; a subclass instance fell through them and got
no edge, so its gradient was silently None. Each case goes through a different recording path: the
generated per-op recorder (unary, binary, with a Python scalar), the generic one (ops with list
parameters), views, and a formula that saves its inputs.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau import Tensor


class Sub(Tensor):
    pass


def _sub(values):
    base = fb.tensor(values, dtype=fb.float64)
    s = object.__new__(Sub)
    for slot in ("_data", "_dtype", "_device", "_version_counter", "_base", "_requires_grad", "_grad",
                 "grad_fn", "_autograd", "_conj"):
        setattr(s, slot, getattr(base, slot))
    return s.requires_grad_()


CASES = {
    "mul_self": (lambda p: (p * p).sum(), lambda v: 2 * v),
    "add_scalar": (lambda p: (p + 2.0).sum(), lambda v: np.ones_like(v)),
    "exp": (lambda p: p.exp().sum(), np.exp),
    "stack": (lambda p: fb.stack([p, p]).sum(), lambda v: 2 * np.ones_like(v)),
    "cat": (lambda p: fb.cat([p, p * 3]).sum(), lambda v: 4 * np.ones_like(v)),
    "view": (lambda p: (p.reshape(2, 1)[1] * 5).sum(), lambda v: np.array([0.0, 5.0])),
    "matmul": (lambda p: p.matmul(p), lambda v: 2 * v),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_subclass_instance_gets_gradient(name):
    fn, expected = CASES[name]
    p = _sub([1.5, -2.0])
    assert type(p) is Sub
    fn(p).backward()
    assert p.grad is not None, f"{name}: the subclass input got no gradient"
    np.testing.assert_allclose(p.grad.numpy(), expected(np.array([1.5, -2.0])))


def test_subclass_saved_input_is_version_checked():
    p = _sub([1.0, 2.0])
    q = p.detach().requires_grad_()
    y = (q * p).sum()
    with fb.no_grad():
        p.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()

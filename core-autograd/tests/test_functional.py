"""flambeau.autograd.functional against hand-computed derivatives."""
from __future__ import annotations

import numpy as np

import flambeau as fb
from flambeau.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def f(x):
    return x ** 2 * 3


def test_jacobian_single():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64)
    j = jacobian(f, x)
    np.testing.assert_allclose(j.numpy(), np.diag([6.0, 12.0]))
    assert not j.requires_grad


def test_jacobian_tuples():
    a = fb.tensor([1.0, 2.0], dtype=fb.float64)
    b = fb.tensor(3.0, dtype=fb.float64)
    jac = jacobian(lambda x, y: (x * y, x.sum()), (a, b))
    assert tuple(jac[0][0].shape) == (2, 2) and tuple(jac[0][1].shape) == (2,)
    np.testing.assert_allclose(jac[0][0].numpy(), np.eye(2) * 3)
    np.testing.assert_allclose(jac[0][1].numpy(), [1.0, 2.0])
    np.testing.assert_allclose(jac[1][0].numpy(), [1.0, 1.0])


def test_hessian():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64)
    h = hessian(lambda t: (t ** 3).sum() + t[0] * t[1], x)
    np.testing.assert_allclose(h.numpy(), [[6.0, 1.0], [1.0, 12.0]])


def test_vjp_jvp():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64)
    v = fb.tensor([1.0, -1.0], dtype=fb.float64)
    out, g = vjp(f, x, v)
    np.testing.assert_allclose(out.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(g.numpy(), [6.0, -12.0])
    out, jv = jvp(lambda t: fb.stack([t.sum(), (t * t).sum()]) if hasattr(fb, "stack") else t * t.sum(), x, v)
    ref = jacobian(lambda t: fb.stack([t.sum(), (t * t).sum()]) if hasattr(fb, "stack") else t * t.sum(), x).numpy()
    np.testing.assert_allclose(jv.numpy(), ref @ v.numpy())


def test_hvp_vhp():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64)
    v = fb.tensor([1.0, 1.0], dtype=fb.float64)
    def fn(t):
        return (t ** 3).sum() + t[0] * t[1]

    out, hv = hvp(fn, x, v)
    np.testing.assert_allclose(hv.numpy(), [7.0, 13.0])
    out, vh = vhp(fn, x, v)
    np.testing.assert_allclose(vh.numpy(), [7.0, 13.0])
    assert out.item() == 11.0


def test_create_graph_keeps_graph():
    x = fb.tensor([1.0, 2.0], dtype=fb.float64, requires_grad=True)
    j = jacobian(lambda t: t ** 3, x, create_graph=True)
    assert j.requires_grad
    j.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])

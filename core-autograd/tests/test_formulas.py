"""Every differentiable core op passes gradcheck and gradgradcheck (float64), with
non-contiguous and broadcast inputs."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.ops._registry import FUNCTIONS

from conftest import make


def check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


UNARY = {  # name -> (low, high) of a domain where the op is smooth
    "neg": (-1, 1), "abs": (0.2, 1), "reciprocal": (0.5, 2), "square": (-1, 1), "exp": (-1, 1), "exp2": (-1, 1),
    "expm1": (-1, 1), "log": (0.5, 2), "log2": (0.5, 2), "log10": (0.5, 2), "log1p": (0.1, 2), "sqrt": (0.5, 2),
    "rsqrt": (0.5, 2), "sin": (-1, 1), "cos": (-1, 1), "tan": (-1, 1), "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8), "atan": (-1, 1), "sinh": (-1, 1), "cosh": (-1, 1), "tanh": (-1, 1), "asinh": (-1, 1),
    "acosh": (1.5, 3), "atanh": (-0.8, 0.8), "sigmoid": (-2, 2), "erf": (-1, 1), "erfc": (-1, 1), "frac": (0.1, 0.9),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(rng, name):
    low, high = UNARY[name]
    x = make(rng, 2, 3, low=low, high=high, noncontig=True)
    check(getattr(fb, name), x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace(rng, name):
    low, high = UNARY[name]
    x = make(rng, 3, low=low, high=high)
    check(lambda t: getattr(t.clone(), name + "_")(), x)


@pytest.mark.parametrize("name", ["sign", "round", "floor", "ceil", "trunc"])
def test_piecewise_constant_have_zero_gradient(rng, name):
    x = make(rng, 4, low=0.1, high=0.4)
    y = getattr(fb, name)(x)
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.zeros(4))


BINARY = {
    "add": (-1, 1, -1, 1), "sub": (-1, 1, -1, 1), "mul": (-1, 1, -1, 1), "div": (-1, 1, 0.5, 2),
    "atan2": (0.2, 1, 0.2, 1), "maximum": (-1, 1, -1, 1), "minimum": (-1, 1, -1, 1), "pow": (0.5, 2, -1, 1),
    "remainder": (2, 3, 0.6, 0.9), "fmod": (2, 3, 0.6, 0.9),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_noncontiguous(rng, name):
    a0, a1, b0, b1 = BINARY[name]
    x = make(rng, 3, 4, low=a0, high=a1, noncontig=True)
    y = make(rng, 4, low=b0, high=b1)
    check(getattr(fb, name), x, y)
    check(getattr(fb, name), y, x)  if name not in ("pow", "div", "remainder", "fmod", "atan2") else None


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_binary_with_scalar(rng, name):
    x = make(rng, 2, 3, low=0.5, high=2)
    check(lambda t: getattr(fb, name)(t, 1.5), x)


def test_add_sub_alpha(rng):
    x, y = make(rng, 3), make(rng, 2, 3)
    check(lambda a, b: fb.add(a, b, alpha=2.5), x, y)
    check(lambda a, b: fb.sub(a, b, alpha=-0.5), x, y)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "atan2"])
def test_binary_inplace(rng, name):
    x = make(rng, 2, 3, low=0.5, high=2)
    y = make(rng, 3, low=0.5, high=1.5)
    check(lambda a, b: getattr(a.clone(), name + "_")(b), x, y)


def test_inplace_on_self_operand(rng):
    x = make(rng, 3, low=0.5, high=2)
    check(lambda a: a.clone().mul_(a), x)


def test_pow_tensor_exponent_at_zero_base():
    x = fb.tensor([0.0, 2.0], dtype=fb.float64, requires_grad=True)
    e = fb.tensor([2.0, 3.0], dtype=fb.float64, requires_grad=True)
    (x ** e).sum().backward()
    assert np.allclose(x.grad.numpy(), [0.0, 12.0])
    assert np.allclose(e.grad.numpy(), [0.0, 8 * np.log(2)])


def test_floor_divide_zero_grad(rng):
    x, y = make(rng, 3, low=1, high=2), make(rng, 3, low=1, high=2)
    fb.floor_divide(x, y).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.zeros(3))


def test_where(rng):
    cond = fb.tensor([[True, False, True]])
    x, y = make(rng, 2, 3, noncontig=True), make(rng, 3)
    check(lambda a, b: fb.where(cond, a, b), x, y)
    check(lambda a: fb.where(cond, a, 0.5), x)


def test_clamp(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda a: fb.clamp(a, min=-0.5), x)
    check(lambda a: fb.clamp(a, max=0.3), x)
    check(lambda a: fb.clamp(a, -0.5, 0.5), x)
    lo, hi = make(rng, 4, low=-0.6, high=-0.4), make(rng, 4, low=0.4, high=0.6)
    check(lambda a, low, high: fb.clamp(a, low, high), x, lo, hi)
    check(lambda a: a.clone().clamp_(min=0), x)


def test_lerp(rng):
    x, e, w = make(rng, 2, 3), make(rng, 3), make(rng, 2, 3)
    check(fb.lerp, x, e, w)
    check(lambda a, b: fb.lerp(a, b, 0.3), x, e)


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": -1, "keepdim": False}])
def test_sum_mean(rng, kw):
    x = make(rng, 2, 3, 4, noncontig=True)
    check(lambda a: fb.sum(a, **kw), x)
    check(lambda a: fb.mean(a, **kw), x)


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}])
def test_prod(rng, kw):
    x = make(rng, 3, 4, low=0.5, high=1.5, noncontig=True)
    check(lambda a: fb.prod(a, **kw), x)


def test_prod_with_zeros():
    x = fb.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0]], dtype=fb.float64, requires_grad=True)
    x.prod(1).sum().backward()
    assert np.allclose(x.grad.numpy(), [[0, 6, 0], [0, 0, 0]])
    y = fb.tensor([2.0, 0.0, 3.0], dtype=fb.float64, requires_grad=True)
    y.prod().backward()
    assert np.allclose(y.grad.numpy(), [0, 6, 0])


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin(rng, name):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda a: getattr(fb, name)(a), x)
    check(lambda a: getattr(fb, name)(a, 1), x)
    check(lambda a: getattr(fb, name)(a, (0,), True), x)


def test_amax_ties_share_gradient():
    x = fb.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.amax().backward()
    assert np.allclose(x.grad.numpy(), [0, 0.5, 0.5])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim(rng, name):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda a: getattr(fb, name)(a, 1)[0], x)
    check(lambda a: getattr(fb, name)(a, 0, keepdim=True).values, x)
    check(lambda a: getattr(fb, name)(a), x)
    values, indices = getattr(fb, name)(x, 1)
    assert values.requires_grad and not indices.requires_grad


def test_views(rng):
    x = make(rng, 2, 3, 4, noncontig=True)
    check(lambda a: a.transpose(0, 2), x)
    check(lambda a: a.permute(1, 2, 0), x)
    check(lambda a: a.reshape(4, 6), x)
    check(lambda a: a.contiguous().view(6, 4), x)
    check(lambda a: a.unsqueeze(1).squeeze(1), x)
    check(lambda a: a.narrow(1, 1, 2), x)
    check(lambda a: a.select(2, 1), x)
    check(lambda a: a[1, :, 1:3], x)
    check(lambda a: a[..., None, 0], x)
    check(lambda a: a.flatten(1), x)
    check(lambda a: a.unbind(1)[2], x)
    y = make(rng, 3, 1)
    check(lambda a: a.expand(2, 3, 4), y)
    m = make(rng, 3, 4, noncontig=True)
    check(lambda a: a.t(), m)
    check(lambda a: a.T, m)


def test_unfold(rng):
    x = make(rng, 3, 7)
    check(lambda a: a.unfold(1, 3, 2), x)
    check(lambda a: a.unfold(1, 2, 1), x)
    check(lambda a: a.unfold(0, 2, 1), x)


def test_as_strided(rng):
    x = make(rng, 3, 4)
    check(lambda a: a.as_strided((2, 2), (4, 1), 1), x)
    check(lambda a: a.as_strided((3, 3), (1, 1)), x)  # overlapping windows


@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2))])
def test_matmul(rng, shapes):
    a, b = make(rng, *shapes[0]), make(rng, *shapes[1])
    check(fb.matmul, a, b)


def test_mm_bmm_mv_dot(rng):
    check(fb.mm, make(rng, 3, 4, noncontig=True), make(rng, 4, 2))
    check(fb.bmm, make(rng, 2, 3, 4), make(rng, 2, 4, 2))
    check(fb.mv, make(rng, 3, 4, noncontig=True), make(rng, 4))
    check(fb.dot, make(rng, 4), make(rng, 4))


def test_copies_and_casts(rng):
    x = make(rng, 2, 3, noncontig=True)
    check(fb.clone, x)
    # through float32: finite differences need a coarser step
    assert gradcheck(lambda a: a.to(fb.float32).to(fb.float64), (x,), eps=1e-3, atol=1e-3, rtol=1e-3)
    check(lambda a: a.double(), x)
    src = make(rng, 3)
    check(lambda a, s: fb.zeros(2, 3, dtype=fb.float64).copy_(s) * a, x, src)
    v = make(rng)
    check(lambda a, s: a.clone().fill_(s) * a, x, v)


def test_setitem_records(rng):
    x = make(rng, 3)
    def fn(a):
        z = fb.zeros(2, 3, dtype=fb.float64)
        z[1] = a * 2
        return z
    check(fn, x)


def test_advanced_index(rng):
    if "index" not in FUNCTIONS:
        pytest.skip("advanced indexing not declared")
    x = make(rng, 4, 3)
    idx = fb.tensor([0, 2, 2])
    check(lambda a: a[idx], x)
    check(lambda a: a[idx, 1], x)


def test_non_differentiable_ops_do_not_require_grad(rng):
    x = make(rng, 3)
    for out in (x > 0, x.eq(x), x.argmax(), fb.isnan(x), (x > 0).logical_not(), x.argmin(0)):
        assert not out.requires_grad and out.grad_fn is None
    assert not x.to(fb.int64).requires_grad


def test_index_put(rng):
    if "index_put" not in FUNCTIONS:
        pytest.skip("advanced indexing not declared")
    x, v = make(rng, 4, 3), make(rng, 2, 3)
    idx = fb.tensor([0, 2])
    check(lambda a, b: FUNCTIONS["index_put"](a, (idx,), b, False), x, v)
    check(lambda a, b: FUNCTIONS["index_put"](a, (idx,), b, True), x, v)

    def setitem(a, b):
        c = a.clone()
        c[idx] = b
        return c

    check(setitem, x, v)


def test_every_differentiable_op_has_a_formula():
    from flambeau.ops._registry import GRADIENTS, OPS

    missing = [n for n, d in OPS.items() if d.provider == "flambeau-core-tensor" and d.differentiable
               and d.composite is None and d.kind != "factory" and n not in GRADIENTS]
    assert missing == []

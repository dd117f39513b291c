"""complex128 gradcheck and gradgradcheck of the products, quotients and complex-only functions.

PyTorch's convention: the gradient of a real ``L`` with respect to ``z`` is ``dL/dRe z + i dL/dIm z``,
so products take the conjugates of the other factors (``grad * conj(other)``, ``grad @ B^H``).
gradcheck checks complex inputs and outputs through their real and imaginary parts; a formula
without the conjugates fails it (the first tests check that the check itself can fail).
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.autograd.function import Function


def cmake(rng, *shape, noncontig=False, requires_grad=True):
    data = rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)
    if noncontig and len(shape) == 2:
        t = fb.tensor(np.ascontiguousarray(data.T), dtype=fb.complex128).t().detach()
        assert not t.is_contiguous()
    else:
        t = fb.tensor(data, dtype=fb.complex128)
    return t.requires_grad_(requires_grad)


def rmake(rng, *shape):
    return fb.tensor(rng.uniform(-1, 1, size=shape), dtype=fb.float64).requires_grad_()


def check(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


class _UnconjugatedMul(Function):
    """``a * b`` with the complex-unaware backward (no conjugates): gradcheck must refuse it."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


def test_gradcheck_detects_missing_conjugate(rng):
    a, b = cmake(rng, 3), cmake(rng, 3)
    assert not gradcheck(_UnconjugatedMul.apply, (a, b), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(_UnconjugatedMul.apply, (a, b))


def test_gradcheck_of_real_output_of_complex_input(rng):
    z = cmake(rng, 4)
    assert gradcheck(lambda t: (t * t.conj()).real, (z,))


def test_mul_div(rng):
    a, b = cmake(rng, 3, 4, noncontig=True), cmake(rng, 4)
    check(lambda x, y: x * y, a, b)
    check(lambda x, y: x / y, a, b + 2)
    check(lambda x: x * (0.5 - 2j), a)  # a complex Python scalar
    check(lambda x: x / (1.5 + 1j), a)
    check(lambda x: (1 - 1j) / x, b + 2)
    check(lambda x: x * x, b)


def test_mixed_real_and_complex(rng):
    a, r = cmake(rng, 3), rmake(rng, 3)
    # the real input gets the real part of its complex gradient
    check(lambda x, y: x * y, a, r)
    check(lambda x, y: y / (x + 2), a, r)
    z = fb.complex(r, r * 2)
    (g,) = fb.autograd.grad((z * z).abs().sum(), r)
    assert g.dtype == fb.float64


def test_mm_bmm_mv_dot(rng):
    check(lambda x, y: x.mm(y), cmake(rng, 2, 3, noncontig=True), cmake(rng, 3, 4))
    check(lambda x, y: x.bmm(y), cmake(rng, 2, 2, 3), cmake(rng, 2, 3, 2))
    check(lambda x, y: x.mv(y), cmake(rng, 3, 2), cmake(rng, 2))
    check(lambda x, y: x.dot(y), cmake(rng, 3), cmake(rng, 3))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)),
                                   ((2, 1, 2, 3), (3, 3, 2)), ((4, 2, 3), (3,))])
def test_matmul(rng, sa, sb):
    check(lambda x, y: x.matmul(y), cmake(rng, *sa), cmake(rng, *sb))


def test_real_imag_second_order(rng):
    z = cmake(rng, 4)
    check(lambda t: t.imag, z)
    check(lambda t: t.real, z)
    check(lambda t: t.real * t.imag, z)
    a, b = rmake(rng, 3), rmake(rng, 3)
    check(lambda r, i: fb.real(fb.complex(r, i)) * fb.imag(fb.complex(r, i)), a, b)
    check(lambda r, i: fb.imag(fb.complex(r, i) * fb.complex(i, r)), a, b)


def test_sgn_angle_abs(rng):
    z = cmake(rng, 5)
    check(lambda t: t.sgn(), z)
    check(lambda t: t.angle(), z)
    check(lambda t: t.abs(), z)
    r = rmake(rng, 5)
    check(lambda t: t.sgn() * t, r)
    check(lambda t: t.angle() + t, r)


def test_sgn_angle_at_zero_are_zero():
    z = fb.zeros(2, dtype=fb.complex128, requires_grad=True)
    (g,) = fb.autograd.grad(z.sgn().real.sum() + z.angle().sum(), z)
    assert g.tolist() == [0j, 0j]


def test_addcmul_addcdiv_lerp(rng):
    x, t1, t2 = cmake(rng, 3), cmake(rng, 3), cmake(rng, 3)
    check(lambda a, b, c: fb.addcmul(a, b, c, value=0.5 - 1j), x, t1, t2)
    check(lambda a, b, c: fb.addcdiv(a, b, c + 2, value=2j), x, t1, t2)
    check(lambda a, b, w: fb.lerp(a, b, w), x, t1, t2)


def test_real_gradients_unchanged_and_free_of_conj_calls(rng, monkeypatch):
    # for real dtypes the conjugates are skipped, not computed: no conj_physical op runs
    from flambeau.ops._registry import FUNCTIONS

    calls = []
    real_conj = FUNCTIONS["conj_physical"]
    monkeypatch.setattr(fb.Tensor, "conj_physical", lambda self: calls.append(1) or real_conj(self))
    a, b = rmake(rng, 2, 3), rmake(rng, 3, 2)
    ((a.mm(b) * a.matmul(b)).sum() + (a / (b.t() + 2)).sum()).backward()
    assert calls == []
    np.testing.assert_allclose(a.grad.numpy(), (2 * (a.detach().mm(b.detach())).mm(b.detach().t())
                                                + 1 / (b.detach().t() + 2)).numpy())


HOLOMORPHIC = ["reciprocal", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
               "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
               "sigmoid"]


@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_unary(rng, name):
    # away from branch cuts and poles: real parts in [0.2, 0.6], imaginary parts in [0.1, 0.4]
    data = rng.uniform(0.2, 0.6, size=3) + 1j * rng.uniform(0.1, 0.4, size=3)
    z = fb.tensor(data, dtype=fb.complex128, requires_grad=True)
    check(lambda t: getattr(t, name)(), z)


def test_pow(rng):
    z, e = cmake(rng, 3) + 1.5, cmake(rng, 3)
    check(lambda t: t.pow(3), z)
    check(lambda t: t.pow(-0.5), z)
    check(lambda t: t.pow(1.5 - 0.5j), z)
    check(lambda t, u: t.pow(u), z, e)

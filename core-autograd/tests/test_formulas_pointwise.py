"""gradcheck and gradgradcheck (float64, non-contiguous and broadcast inputs) for the pointwise ops
of the operator catalogue: fused arithmetic, binary math functions, special functions."""
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


UNARY = {  # op -> (low, high) of a domain where it is smooth; second: whether gradgradcheck applies
    "deg2rad": (-2, 2), "rad2deg": (-2, 2), "lgamma": (0.5, 3), "digamma": (0.5, 3), "erfinv": (-0.8, 0.8),
    "i0": (-2, 2), "special_i0e": (0.2, 2), "special_i1": (0.2, 2), "special_i1e": (0.2, 2),
    "special_ndtr": (-2, 2), "special_ndtri": (0.1, 0.9), "special_log_ndtr": (-3, 2), "special_erfcx": (-1, 2),
    "special_entr": (0.2, 2), "sinc": (0.2, 1.5), "nan_to_num": (-2, 2), "conj_physical": (-1, 1),
    "real": (-1, 1), "logit": (0.1, 0.9),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(rng, name):
    low, high = UNARY[name]
    x = make(rng, 2, 3, low=low, high=high, noncontig=True)
    check(FUNCTIONS[name], x)


@pytest.mark.parametrize("name", ["deg2rad", "lgamma", "digamma", "erfinv", "i0", "sinc", "logit", "nan_to_num"])
def test_unary_inplace(rng, name):
    low, high = UNARY[name]
    x = make(rng, 3, low=low, high=high)
    check(lambda t: getattr(t.clone(), name + "_")(), x)


def test_i0e_i1e_negative_side(rng):
    x = make(rng, 4, low=-2, high=-0.2)
    check(FUNCTIONS["special_i0e"], x)
    check(FUNCTIONS["special_i1e"], x)
    check(FUNCTIONS["special_i1"], x)


def test_polygamma_and_mvlgamma(rng):
    x = make(rng, 3, 2, low=1.5, high=3, noncontig=True)
    for n in (0, 1, 2):
        check(lambda t, n=n: fb.polygamma(n, t), x)
    check(lambda t: t.polygamma(1), x)
    check(lambda t: fb.mvlgamma(t, 3), x)


def test_logit_eps_clamps_gradient(rng):
    x = fb.tensor([0.05, 0.5, 0.97], dtype=fb.float64, requires_grad=True)
    fb.logit(x, eps=0.1).sum().backward()
    g = x.grad.numpy()
    assert g[0] == 0 and g[2] == 0 and np.isclose(g[1], 4.0)
    check(lambda t: fb.logit(t, eps=0.01), make(rng, 4, low=0.1, high=0.9))


def test_nan_to_num_gradient_is_zero_at_non_finite():
    x = fb.tensor([1.0, float("nan"), float("inf"), -2.0], dtype=fb.float64, requires_grad=True)
    fb.nan_to_num(x).sum().backward()
    assert np.array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 1.0])


BINARY = {  # op -> (x range, y range)
    "hypot": ((0.2, 1), (0.2, 1)), "logaddexp": ((-1, 1), (-1, 1)), "logaddexp2": ((-1, 1), (-1, 1)),
    "xlogy": ((-1, 1), (0.5, 2)), "special_xlog1py": ((-1, 1), (0.5, 2)), "copysign": ((0.2, 1), (-1, 1)),
    "float_power": ((0.5, 2), (-1, 1)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_noncontiguous(rng, name):
    (a0, a1), (b0, b1) = BINARY[name]
    x = make(rng, 3, 4, low=a0, high=a1, noncontig=True)
    y = make(rng, 4, low=b0, high=b1)
    check(FUNCTIONS[name], x, y)


@pytest.mark.parametrize("name", ["xlogy", "float_power", "copysign"])
def test_binary_with_scalar(rng, name):
    x = make(rng, 2, 3, low=0.5, high=2)
    check(lambda t: FUNCTIONS[name](t, 1.5), x)


def test_xlogy_scalar_first_and_zero_input(rng):
    y = make(rng, 3, low=0.5, high=2)
    check(lambda t: fb.xlogy(2.0, t), y)
    x = fb.tensor([0.0, 1.0], dtype=fb.float64, requires_grad=True)
    fb.xlogy(x, fb.tensor([0.0, 2.0], dtype=fb.float64)).sum().backward()
    assert np.allclose(x.grad.numpy(), [0.0, np.log(2.0)])


def test_ldexp(rng):
    x = make(rng, 3, 4, noncontig=True)
    e = make(rng, 4, low=-2, high=2)
    check(fb.ldexp, x, e)
    check(lambda t: fb.ldexp(t, fb.tensor([1, -2, 0, 3])), x)


def test_addcmul_addcdiv(rng):
    x = make(rng, 3, 4, noncontig=True)
    a = make(rng, 4)
    b = make(rng, 3, 1, low=0.5, high=2)
    check(lambda p, q, r: fb.addcmul(p, q, r, value=0.5), x, a, b)
    check(lambda p, q, r: fb.addcdiv(p, q, r, value=-2), x, a, b)
    check(lambda p, q, r: p.clone().addcmul_(q, r), x, a, b)


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
def test_clamp_bounds(rng, name):
    x = make(rng, 3, 4, noncontig=True)
    bound = make(rng, 4, low=-0.5, high=0.5)
    check(FUNCTIONS[name], x, bound)
    check(lambda t: FUNCTIONS[name](t, 0.1), x)


def test_igamma_gradient_in_x_and_refusal_in_a(rng):
    a = make(rng, 4, low=0.5, high=3, requires_grad=False)
    x = make(rng, 3, 4, low=0.5, high=3, noncontig=True)
    check(lambda t: fb.igamma(a, t), x)
    check(lambda t: fb.igammac(a, t), x)
    a.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        fb.igamma(a, x).sum().backward()


def test_frexp_mantissa_gradient(rng):
    x = make(rng, 2, 3, low=0.3, high=7, noncontig=True)
    check(lambda t: fb.frexp(t).mantissa, x, second=False)


def test_imag_and_real_of_complex_gradients():
    z = fb.tensor([1 + 2j, -3 + 0.5j], dtype=fb.complex128, requires_grad=True)
    (fb.real(z) * 2 + fb.imag(z) * 3).sum().backward()
    assert np.allclose(z.grad.numpy(), [2 + 3j, 2 + 3j])


@pytest.mark.parametrize("name", ["sgn", "angle"])
def test_piecewise_constant_have_zero_gradient(rng, name):
    x = make(rng, 4, low=0.1, high=0.4)
    FUNCTIONS[name](x).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.zeros(4))


@pytest.mark.parametrize("name", ["nextafter", "heaviside", "gcd", "lcm", "signbit"])
def test_not_differentiable(name):
    decl = fb.ops.declarations()[name]
    assert decl.differentiable is False


def test_zeta_gradient_in_q_and_refusal_in_s(rng):
    q = make(rng, 3, 4, low=0.5, high=2, noncontig=True)
    check(lambda t: fb.special.zeta(3.0, t), q)
    s = make(rng, 4, low=2, high=3, requires_grad=False)
    check(lambda t: fb.special.zeta(s, t), q)
    s.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="special_zeta: input"):
        fb.special.zeta(s, q).sum().backward()


def test_gradient_composite_is_differentiable(rng):
    x = make(rng, 4, 5, noncontig=True)
    check(lambda t: fb.gradient(t, spacing=0.5, edge_order=2)[1], x)


def test_polygamma_inplace_on_a_non_leaf(rng):
    x = make(rng, 2, 3, low=1.5, high=3, noncontig=True)
    check(lambda t: (t * 1).polygamma_(1), x)
    leaf = make(rng, 3, low=1.5, high=3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.polygamma_(1)


def test_maximum_gradient_through_the_zero_dim_cast():
    # A float64 0-d operand is cast to the float32 operand's dtype (PyTorch's common dtype);
    # its gradient comes back in its own dtype. Moved from core-tensor's test_zero_dim_common.py.
    x = fb.tensor([1.0, 5.0], requires_grad=True)
    y = fb.tensor(3.0, dtype=fb.float64, requires_grad=True)
    z = fb.maximum(x, y)
    assert z.dtype is fb.float32
    z.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]
    assert y.grad.dtype is fb.float64 and y.grad.item() == 1.0

"""Identity, Linear, Bilinear, LazyLinear, Flatten, Unflatten and F.linear / F.bilinear."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau import nn
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn import functional as F


def _rand(*shape, seed=0):
    return fb.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=fb.float64)


# -- F.linear ------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(lead=st.lists(st.integers(0, 3), min_size=0, max_size=3), fin=st.integers(1, 4), fout=st.integers(1, 4),
       bias=st.booleans())
def test_linear_matches_numpy(lead, fin, fout, bias):
    x = _rand(*lead, fin, seed=1)
    w = _rand(fout, fin, seed=2)
    b = _rand(fout, seed=3) if bias else None
    got = F.linear(x, w, b).numpy()
    expected = x.numpy() @ w.numpy().T + (b.numpy() if bias else 0)
    assert got.shape == tuple(lead) + (fout,)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_linear_1d_weight_and_1d_input():
    x, w = _rand(3, 4), _rand(4, seed=5)
    np.testing.assert_allclose(F.linear(x, w).numpy(), x.numpy() @ w.numpy())
    v, m = _rand(4, seed=6), _rand(2, 4, seed=7)
    np.testing.assert_allclose(F.linear(v, m, _rand(2, seed=8)).numpy(),
                               m.numpy() @ v.numpy() + _rand(2, seed=8).numpy())


def test_linear_gradcheck():
    x = _rand(2, 3, 4).requires_grad_()
    w = _rand(5, 4, seed=1).requires_grad_()
    b = _rand(5, seed=2).requires_grad_()
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (x[0], w))
    assert gradgradcheck(F.linear, (x[0], w, b))


def test_linear_formula_matches_composite_gradient():
    # nn_linear's registered formula (used when a backend has a kernel) agrees with the composite's graph
    from flambeau.nn._formulas.linear import formulas

    class Ctx:
        def __init__(self, args):
            self.args = args

        def needs(self, i):
            return True

    for wshape in ((5, 4), (4,)):
        x = _rand(2, 3, 4).requires_grad_()
        w = _rand(*wshape, seed=1).requires_grad_()
        out = F.linear(x, w)
        g = _rand(*out.shape, seed=9)
        out.backward(g)
        gi, gw, _ = formulas()["nn_linear"](Ctx((x.detach(), w.detach(), None)), g)
        np.testing.assert_allclose(gi.numpy(), x.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-12)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x3 and 4x5\)"):
        F.linear(fb.ones(2, 3, 3), fb.ones(5, 4))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype"):
        F.linear(fb.ones(2, 3), fb.ones(5, 3, dtype=fb.float64))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        F.linear(fb.ones(2, 3), fb.ones(5, 3), fb.ones(4))
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        F.linear(fb.ones(2, 3), fb.ones(1, 5, 3))


def test_linear_on_meta_allocates_nothing():
    out = F.linear(fb.empty(10**6, 10**4, device="meta"), fb.empty(10**5, 10**4, device="meta"))
    assert out.shape == (10**6, 10**5) and out.is_meta


# -- F.bilinear -----------------------------------------------------------------------------------------
def test_bilinear_matches_einsum_and_gradcheck():
    x1, x2 = _rand(2, 3, 4, seed=1), _rand(2, 3, 5, seed=2)
    w, b = _rand(6, 4, 5, seed=3), _rand(6, seed=4)
    expected = np.einsum("...i,oij,...j->...o", x1.numpy(), w.numpy(), x2.numpy()) + b.numpy()
    np.testing.assert_allclose(F.bilinear(x1, x2, w, b).numpy(), expected, rtol=1e-12)
    args = tuple(t.requires_grad_() for t in (x1[0], x2[0], w, b))
    assert gradcheck(F.bilinear, args)


def test_bilinear_errors():
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input dimensions do not match: got 2 and 3"):
        F.bilinear(fb.ones(2, 3), fb.ones(1, 2, 3), fb.ones(1, 3, 3))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match: got 2 and 3"):
        F.bilinear(fb.ones(2, 3), fb.ones(3, 3), fb.ones(1, 3, 3))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 4"):
        F.bilinear(fb.ones(2, 3), fb.ones(2, 3), fb.ones(1, 4, 3))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 3 but expected 5"):
        F.bilinear(fb.ones(2, 4), fb.ones(2, 3), fb.ones(1, 4, 5))
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 2 but expected 1"):
        F.bilinear(fb.ones(2, 4), fb.ones(2, 5), fb.ones(1, 4, 5), fb.ones(2))


# -- modules ----------------------------------------------------------------------------------------------
def test_linear_module_shapes_init_bounds_and_repr():
    fb.manual_seed(0)
    m = nn.Linear(50, 20)
    assert m.weight.shape == (20, 50) and m.bias.shape == (20,)
    bound = 1 / math.sqrt(50)  # kaiming_uniform(a=sqrt(5)) gives the same bound as the bias
    assert m.weight.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    assert m.weight.abs().max().item() > 0.9 * bound
    assert repr(m) == "Linear(in_features=50, out_features=20, bias=True)"
    assert m(fb.ones(7, 50)).shape == (7, 20)
    assert nn.Linear(3, 2, dtype=fb.float64).weight.dtype == fb.float64
    with pytest.raises(TypeError, match="in_features must be an int"):
        nn.Linear(2.5, 3)


def test_bilinear_module():
    m = nn.Bilinear(3, 4, 5)
    assert m.weight.shape == (5, 3, 4) and m.bias.shape == (5,)
    assert m.weight.abs().max().item() <= 1 / math.sqrt(3)
    assert m(fb.ones(2, 3), fb.ones(2, 4)).shape == (2, 5)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)"


def test_identity():
    x = fb.ones(2)
    assert nn.Identity(54, unused="x")(x) is x
    assert repr(nn.Identity()) == "Identity()"


def test_lazy_linear():
    m = nn.LazyLinear(3)
    assert isinstance(m.weight, nn.UninitializedParameter)
    assert repr(m.weight) == "<UninitializedParameter>"
    out = m(fb.ones(2, 7))
    assert out.shape == (2, 3)
    assert type(m) is nn.Linear and m.in_features == 7 and type(m.weight) is nn.Parameter
    assert m.weight.shape == (3, 7) and m.weight.abs().max().item() <= 1 / math.sqrt(7)
    assert not m._forward_pre_hooks


def test_lazy_linear_loads_state_dict():
    src = nn.Linear(4, 2)
    m = nn.LazyLinear(2)
    m.load_state_dict(src.state_dict())
    assert type(m) is nn.Linear and m.weight.shape == (2, 4)
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())


def test_flatten_unflatten():
    x = fb.arange(24.0).reshape(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(1, (3, 1))(x).shape == (2, 3, 1, 4)
    assert nn.Unflatten(-1, (2, -1))(x).shape == (2, 3, 2, 2)
    assert repr(nn.Unflatten(1, (2, 5))) == "Unflatten(dim=1, unflattened_size=(2, 5))"
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        nn.Unflatten(1, (2, 2.5))
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        nn.Unflatten(1, (2, 2))(x)

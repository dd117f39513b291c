"""Activation functions: forward against numpy/scipy references, gradients (gradcheck in float64,
double backward), the kinks, NaN, dtypes, in-place forms and PyTorch's errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(x):
    return special.expit(x)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


#: functional name -> (call, numpy reference)
REFERENCES = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "gelu": (F.gelu, lambda x: x * special.ndtr(x)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh),
    "silu": (F.silu, lambda x: x * _sigmoid(x)),
    "mish": (F.mish, lambda x: x * np.tanh(_softplus(x))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 1.5), lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * np.expm1(x / 1.5))),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    "softplus": (lambda x: F.softplus(x, 2.0, 5.0), lambda x: _softplus(x, 2.0, 5.0)),
    "logsigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0.0, -x)),
    "softshrink": (lambda x: F.softshrink(x, 0.7),
                   lambda x: np.where(x > 0.7, x - 0.7, np.where(x < -0.7, x + 0.7, 0))),
    "hardshrink": (lambda x: F.hardshrink(x, 0.7), lambda x: np.where(np.abs(x) > 0.7, x, 0)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "threshold": (lambda x: F.threshold(x, 0.3, -2.0), lambda x: np.where(x > 0.3, x, -2.0)),
    "sigmoid": (F.sigmoid, _sigmoid),
    "tanh": (F.tanh, np.tanh),
    "rrelu_eval": (F.rrelu, lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2)),
    "prelu": (lambda x: F.prelu(x, fb.tensor([0.25], dtype=x.dtype)), lambda x: np.where(x > 0, x, 0.25 * x)),
}
#: the ops whose C++ kernels fuse forward and backward
FUSED = ["gelu", "gelu_tanh", "silu", "mish", "leaky_relu", "elu", "hardswish", "softplus"]


def _values(rng, shape, dtype=np.float64, low=-6.0, high=6.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# -- forward -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_matches_reference(name, dtype, rng):
    call, ref = REFERENCES[name]
    x = _values(rng, (7, 33), dtype)
    x[0, :5] = [0.0, -3.0, 3.0, 25.0, -25.0]  # kinks and the saturated ends
    got = call(fb.tensor(x)).numpy()
    want = ref(x.astype(np.float64))
    tol = 2e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("name", FUSED)
def test_fused_kernel_over_threads_and_tails(name, rng):
    # enough elements for several OpenMP chunks, an odd tail, and far tails of the functions
    call, ref = REFERENCES[name]
    x = _values(rng, (200_003,), np.float32, -30.0, 30.0)
    np.testing.assert_allclose(call(fb.tensor(x)).numpy(), ref(x.astype(np.float64)), rtol=3e-6, atol=1e-6)


def test_gelu_left_tail_is_accurate_in_float32():
    # 1 + erf(x) cancels there; the kernel's erfc keeps relative accuracy
    x = np.array([-5.0, -7.0, -9.0], np.float32)
    np.testing.assert_allclose(F.gelu(fb.tensor(x)).numpy(), x * special.ndtr(x.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_goes_through_float32(name, dtype, rng):
    call, ref = REFERENCES[name]
    x32 = _values(rng, (5, 8), np.float32, -4, 4)
    x = fb.tensor(x32).to(getattr(fb, dtype))
    out = call(x)
    assert out.dtype == getattr(fb, dtype)
    want = ref(x.float().numpy().astype(np.float64))
    np.testing.assert_allclose(out.float().numpy(), want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", FUSED)
def test_strided_input(name, rng):
    call, ref = REFERENCES[name]
    x = _values(rng, (9, 6))
    t = fb.tensor(x).t()
    np.testing.assert_allclose(call(t).numpy(), ref(x.T), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
       name=st.sampled_from(FUSED), transpose=st.booleans())
def test_kernel_equals_composite_for_any_shape(shape, name, transpose):
    rng = np.random.default_rng(len(shape))
    x = fb.tensor(_values(rng, tuple(shape), np.float32))
    if transpose and x.dim() >= 2:
        x = x.transpose(0, 1)
    op = "nn_gelu" if name.startswith("gelu") else f"nn_{name}"
    params = {"gelu": ("none",), "gelu_tanh": ("tanh",), "leaky_relu": (0.2,), "elu": (0.7, 1.0, 1.0),
              "softplus": (2.0, 5.0)}.get(name, ())
    kernel = fb.ops.function(op)(x, *params)
    composite = fb.ops.declarations()[op].composite(x, *params)
    # float32: 1 + tanh(u) cancels in the left tail of gelu's tanh form, in both, differently
    np.testing.assert_allclose(kernel.numpy(), composite.numpy(), rtol=2e-6, atol=1e-5)
    g = fb.tensor(_values(rng, tuple(x.shape), np.float32))
    back = fb.ops.function(op + "_backward")
    np.testing.assert_allclose(back(g, x, *params).numpy(),
                               fb.ops.declarations()[op + "_backward"].composite(g, x, *params).numpy(),
                               rtol=2e-5, atol=1e-5)  # the same left-tail cancellation as the forward's


# -- gradients -----------------------------------------------------------------------------------

GRAD_CASES = {name: call for name, (call, _) in REFERENCES.items()}
GRAD_CASES["glu"] = lambda x: F.glu(x, 0)
GRAD_CASES["rrelu_train"] = None  # random: checked separately


@pytest.mark.parametrize("name", sorted(n for n in GRAD_CASES if GRAD_CASES[n] is not None))
def test_gradcheck(name, rng):
    x = _values(rng, (4, 5), low=-4, high=4)
    # keep away from the kinks, where finite differences straddle two pieces
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    for kink in (-3.0, 3.0, 0.3, 0.7, -0.7, -0.5, 2.0, 5.0, 2.5):
        x = np.where(np.abs(x - kink) < 0.05, kink + 0.2, x)
    t = fb.tensor(x, requires_grad=True)
    assert gradcheck(GRAD_CASES[name], (t,))
    if name not in ("relu", "relu6", "hardtanh", "hardshrink", "threshold", "rrelu_eval", "leaky_relu",
                    "softshrink", "hardsigmoid", "prelu"):  # piecewise linear: second derivative 0
        assert gradgradcheck(GRAD_CASES[name], (t,))


def test_prelu_weight_gradient_per_channel(rng):
    x = fb.tensor(_values(rng, (3, 4, 2), low=-2, high=2), requires_grad=True)
    w = fb.tensor(rng.uniform(0.1, 0.5, 4), requires_grad=True)
    assert gradcheck(F.prelu, (x, w))


def test_gradients_at_the_kinks():
    x = fb.tensor([0.0], requires_grad=True)
    F.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0]
    x = fb.tensor([-1.0, 1.0, 0.0, 6.0], requires_grad=True)
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0]
    x = fb.tensor([0.0, 6.0, 3.0], requires_grad=True)
    F.relu6(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    x = fb.tensor([0.0], requires_grad=True)
    F.leaky_relu(x, 0.1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.1], rtol=1e-6)
    x = fb.tensor([-3.0, 3.0, -4.0, 4.0], requires_grad=True)
    F.hardswish(x).sum().backward()
    assert x.grad.tolist() == [-0.5, 1.5, 0.0, 1.0]


def test_double_backward_through_fused_kernel():
    x = fb.tensor([0.3, -1.2, 2.0], dtype=fb.float64, requires_grad=True)
    (g,) = fb.autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    (gg,) = fb.autograd.grad(g.sum(), x)
    v = x.detach().numpy()
    pdf = np.exp(-v * v / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(gg.numpy(), pdf * (2 - v * v), rtol=1e-10)


# -- NaN, dtypes, in place -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(set(REFERENCES) - {"threshold", "hardshrink"}))
def test_nan_propagates(name):
    call, _ = REFERENCES[name]
    assert math.isnan(call(fb.tensor([float("nan")])).item())


def test_threshold_and_hardshrink_keep_nan():
    assert math.isnan(F.threshold(fb.tensor([float("nan")]), 0.0, 1.0).item())
    assert math.isnan(F.hardshrink(fb.tensor([float("nan")])).item())


def test_relu_of_integers_and_bool():
    assert F.relu(fb.tensor([-2, 0, 3])).tolist() == [0, 0, 3]
    assert fb.relu(fb.tensor([-2, 5], dtype=fb.int8)).dtype == fb.int8
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        fb.relu(fb.tensor([True]))
    assert fb.tensor([-1.0, 2.0]).relu().tolist() == [0.0, 2.0]


@pytest.mark.parametrize("call", [F.gelu, F.silu, F.mish, F.elu, F.leaky_relu, F.softplus, F.hardswish, F.selu,
                                  F.logsigmoid, F.hardshrink])
def test_integer_input_refused(call):
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        call(fb.tensor([1, 2]))


@pytest.mark.parametrize("name,call", [
    ("relu", lambda x: F.relu(x, inplace=True)), ("relu_", F.relu_),
    ("elu", lambda x: F.elu(x, inplace=True)), ("elu_", F.elu_),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.01, True)), ("leaky_relu_", F.leaky_relu_),
    ("hardtanh_", F.hardtanh_), ("relu6", lambda x: F.relu6(x, inplace=True)),
    ("threshold_", lambda x: F.threshold_(x, 0.0, 5.0)), ("selu_", F.selu_), ("celu_", F.celu_),
    ("silu", lambda x: F.silu(x, inplace=True)), ("mish", lambda x: F.mish(x, inplace=True)),
    ("hardswish", lambda x: F.hardswish(x, inplace=True)), ("hardsigmoid", lambda x: F.hardsigmoid(x, inplace=True)),
    ("rrelu_", F.rrelu_),
])
def test_inplace_forms_write_into_input(name, call, rng):
    x = _values(rng, (3, 4), np.float32)
    outplace_call = {"relu_": F.relu, "elu_": F.elu, "leaky_relu_": F.leaky_relu, "hardtanh_": F.hardtanh,
                     "threshold_": lambda t: F.threshold(t, 0.0, 5.0), "selu_": F.selu, "celu_": F.celu,
                     "rrelu_": F.rrelu}
    want = outplace_call.get(name, lambda t: call(t.clone()))(fb.tensor(x)).numpy()
    t = fb.tensor(x)
    result = call(t)
    assert result is t
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)


def test_inplace_gradient():
    x = fb.tensor([-1.0, 0.5, 2.0], dtype=fb.float64, requires_grad=True)
    y = x * 1.0
    F.elu_(y, 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5 * math.exp(-1.0), 1.0, 1.0], rtol=1e-12)


# -- rrelu ---------------------------------------------------------------------------------------

def test_rrelu_training_draws_slopes_in_range():
    x = -fb.rand(10_000, dtype=fb.float64) - 0.1
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (y / x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005  # uniform: sd of the mean 0.058 / 100
    pos = fb.rand(100) + 0.1
    assert (F.rrelu(pos, training=True) == pos).all()
    fb.manual_seed(5)
    a = F.rrelu(x, training=True)
    fb.manual_seed(5)
    assert (a == F.rrelu(x, training=True)).all()


def test_rrelu_training_gradient_is_the_drawn_slope():
    x = fb.tensor([-1.0, -2.0, 3.0], dtype=fb.float64, requires_grad=True)
    y = F.rrelu(x, training=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y / x).detach().numpy(), rtol=1e-12)


# -- errors --------------------------------------------------------------------------------------

def test_errors():
    x = fb.ones(2, 3)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(x, approximate="fast")
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(fb.tensor(1.0))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 2 and channel size = 3."):
        F.prelu(x, fb.ones(2))
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(RuntimeError,
                       match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but found -1"):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(x, 0.5, 0.1, training=True)


def test_glu_values(rng):
    x = _values(rng, (4, 6))
    np.testing.assert_allclose(F.glu(fb.tensor(x)).numpy(), x[:, :3] * _sigmoid(x[:, 3:]), rtol=1e-12)
    np.testing.assert_allclose(F.glu(fb.tensor(x), 0).numpy(), x[:2] * _sigmoid(x[2:]), rtol=1e-12)


# -- modules -------------------------------------------------------------------------------------

MODULES = [
    (lambda nn: nn.ReLU(), F.relu, "ReLU()"), (lambda nn: nn.ReLU(inplace=True), F.relu, "ReLU(inplace=True)"),
    (lambda nn: nn.GELU(), F.gelu, "GELU(approximate='none')"),
    (lambda nn: nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh"), "GELU(approximate='tanh')"),
    (lambda nn: nn.SiLU(), F.silu, "SiLU()"), (lambda nn: nn.Mish(), F.mish, "Mish()"),
    (lambda nn: nn.ELU(0.5), lambda x: F.elu(x, 0.5), "ELU(alpha=0.5)"),
    (lambda nn: nn.CELU(2.0), lambda x: F.celu(x, 2.0), "CELU(alpha=2.0)"), (lambda nn: nn.SELU(), F.selu, "SELU()"),
    (lambda nn: nn.LeakyReLU(0.2, True), lambda x: F.leaky_relu(x, 0.2), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda nn: nn.Hardtanh(-2, 2), lambda x: F.hardtanh(x, -2, 2), "Hardtanh(min_val=-2, max_val=2)"),
    (lambda nn: nn.ReLU6(), F.relu6, "ReLU6()"), (lambda nn: nn.Hardswish(), F.hardswish, "Hardswish()"),
    (lambda nn: nn.Hardsigmoid(), F.hardsigmoid, "Hardsigmoid()"), (lambda nn: nn.Sigmoid(), F.sigmoid, "Sigmoid()"),
    (lambda nn: nn.Tanh(), F.tanh, "Tanh()"), (lambda nn: nn.LogSigmoid(), F.logsigmoid, "LogSigmoid()"),
    (lambda nn: nn.Softplus(2.0, 10.0), lambda x: F.softplus(x, 2.0, 10.0), "Softplus(beta=2.0, threshold=10.0)"),
    (lambda nn: nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3), "Hardshrink(0.3)"),
    (lambda nn: nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3), "Softshrink(0.3)"),
    (lambda nn: nn.Softsign(), F.softsign, "Softsign()"), (lambda nn: nn.Tanhshrink(), F.tanhshrink, "Tanhshrink()"),
    (lambda nn: nn.Threshold(0.1, 20.0), lambda x: F.threshold(x, 0.1, 20.0), "Threshold(threshold=0.1, value=20.0)"),
    (lambda nn: nn.GLU(0), lambda x: F.glu(x, 0), "GLU(dim=0)"),
]


@pytest.mark.parametrize("index", range(len(MODULES)))
def test_modules_forward_and_repr(index, rng):
    import flambeau.nn as nn

    make, functional, text = MODULES[index]
    module = make(nn)
    assert repr(module) == text
    x = _values(rng, (4, 6), np.float32)
    np.testing.assert_allclose(module(fb.tensor(x)).numpy(), functional(fb.tensor(x)).numpy(), rtol=1e-6)


def test_prelu_module_parameters_and_gradient():
    import flambeau.nn as nn

    m = nn.PReLU(3, init=0.1)
    assert repr(m) == "PReLU(num_parameters=3)"
    assert [name for name, _ in m.named_parameters()] == ["weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), [0.1] * 3, rtol=1e-6)
    assert nn.PReLU().weight.shape == (1,) and abs(nn.PReLU().weight.item() - 0.25) < 1e-7
    x = fb.tensor([[-1.0, 2.0, -3.0]])
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), [-1.0, 0.0, -3.0])
    assert nn.PReLU(2, dtype=fb.float64).weight.dtype == fb.float64


def test_rrelu_module_train_and_eval():
    import flambeau.nn as nn

    m = nn.RReLU(0.1, 0.3)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3)"
    x = -fb.ones(1000)
    slopes = -m(x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2 * np.ones(1000), rtol=1e-6)


def test_inplace_module_writes_into_input():
    import flambeau.nn as nn

    x = fb.tensor([-1.0, 1.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 1.0]


def test_integer_inputs_where_pytorch_takes_them():
    assert F.hardtanh(fb.tensor([-3, 0, 5])).tolist() == [-1, 0, 1]
    assert F.relu6(fb.tensor([-3, 4, 9])).tolist() == [0, 4, 6]
    assert F.hardtanh(fb.tensor([-3, 5])).dtype == fb.int64
    y = F.softsign(fb.tensor([1, 2]))
    assert y.dtype == fb.float32
    np.testing.assert_allclose(y.numpy(), [0.5, 2 / 3], rtol=1e-6)
    np.testing.assert_allclose(F.tanhshrink(fb.tensor([1])).numpy(), [1 - math.tanh(1)], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
        fb.relu(fb.tensor([1 + 1j]))

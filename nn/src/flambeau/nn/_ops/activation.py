"""Declarations of flambeau-nn's activation ops.

Each op's maths is written here once with flambeau ops: ``f`` (the composite every backend runs),
``df`` (its derivative, the composite of the ``*_backward`` op) and, for the ops with a backward op,
``d2f`` (the second derivative, for double backward). The hot activations (gelu, silu, mish,
leaky_relu, elu, hardswish, softplus) have a ``nn_<name>_backward`` op, so that a backend can fuse
the backward pass too (the CPU backend does, in C++); the others have formulas written with
``df`` directly. The activations PyTorch keeps in its tensor namespace (relu, threshold, hardshrink,
selu, celu, prelu, rrelu) are core-tensor's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import flambeau as fb
from flambeau import _dtypes
from flambeau._tensor import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape, to_float, type_name, wrap_dim

_FLOATING = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K = math.sqrt(2.0 / math.pi)  # gelu's tanh approximation: tanh(K * (x + C * x**3))
_C = 0.044715


def _op(name: str) -> Callable[..., Any]:
    return fb.ops.function(name)


def check_floating(kernel: str, input: Tensor) -> None:
    """PyTorch's error for a kernel without an integer (or complex) version."""
    if input._dtype not in _FLOATING:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input._dtype)}\'')


def _number(op: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(value).__name__}")
    return value


# -- the maths -----------------------------------------------------------------------------------
# Written so that no branch that `where` discards can overflow: a discarded inf would still reach
# the gradient as 0 * inf = NaN.

def _sigmoid(x: Tensor) -> Tensor:
    return fb.sigmoid(x)


def _gelu_parts(x: Tensor) -> tuple[Tensor, Tensor]:
    """tanh(u) and u' for gelu's tanh approximation."""
    t = fb.tanh((x + x * x * x * _C) * _K)
    du = (x * x * (3.0 * _C) + 1.0) * _K
    return t, du


def gelu_f(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        t, _ = _gelu_parts(x)
        return x * (t + 1.0) * 0.5
    # erfc keeps the left tail accurate (1 + erf(x) cancels to nothing there)
    return x * fb.erfc(x * -_SQRT1_2) * 0.5


def gelu_df(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        t, du = _gelu_parts(x)
        return (t + 1.0) * 0.5 + x * (-(t * t) + 1.0) * du * 0.5
    return fb.erfc(x * -_SQRT1_2) * 0.5 + x * fb.exp(x * x * -0.5) * _INV_SQRT_2PI


def gelu_d2f(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        t, du = _gelu_parts(x)
        return (-(t * t) + 1.0) * (du - x * t * du * du + x * x * (3.0 * _K * _C))
    return fb.exp(x * x * -0.5) * _INV_SQRT_2PI * (-(x * x) + 2.0)


def silu_f(x: Tensor) -> Tensor:
    return x * _sigmoid(x)


def silu_df(x: Tensor) -> Tensor:
    s = _sigmoid(x)
    return s * (x * (-s + 1.0) + 1.0)


def silu_d2f(x: Tensor) -> Tensor:
    s = _sigmoid(x)
    return s * (-s + 1.0) * (x * (s * -2.0 + 1.0) + 2.0)


def _tanh_softplus(x: Tensor) -> Tensor:
    return fb.tanh(softplus_f(x, 1.0, 20.0))


def mish_f(x: Tensor) -> Tensor:
    return x * _tanh_softplus(x)


def mish_df(x: Tensor) -> Tensor:
    t = _tanh_softplus(x)
    return t + x * _sigmoid(x) * (-(t * t) + 1.0)


def mish_d2f(x: Tensor) -> Tensor:
    t, s = _tanh_softplus(x), _sigmoid(x)
    sech2 = -(t * t) + 1.0
    return s * sech2 * 2.0 + x * s * sech2 * (-s + 1.0 - t * s * 2.0)


def leaky_relu_f(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return fb.where(x > 0, x, x * negative_slope)


def leaky_relu_df(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return fb.where(x > 0, fb.ones_like(x), fb.full_like(x, negative_slope))


def leaky_relu_d2f(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return fb.zeros_like(x)


def _elu_exp(x: Tensor, input_scale: float) -> Tensor:
    return fb.exp(fb.clamp_max(x, 0) * input_scale)


def elu_f(x: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    negative = fb.expm1(fb.clamp_max(x, 0) * input_scale) * (alpha * scale)
    return fb.where(x > 0, x * scale, negative)


def elu_df(x: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    return fb.where(x > 0, fb.full_like(x, scale), _elu_exp(x, input_scale) * (alpha * scale * input_scale))


def elu_d2f(x: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    return fb.where(x > 0, fb.zeros_like(x), _elu_exp(x, input_scale) * (alpha * scale * input_scale ** 2))


def hardswish_f(x: Tensor) -> Tensor:
    return x * fb.clamp(x + 3.0, 0.0, 6.0) / 6.0


def hardswish_df(x: Tensor) -> Tensor:
    # PyTorch's: 0 below -3, x / 3 + 1/2 on [-3, 3] (so -1/2 at -3), 1 above
    return fb.where(x < -3.0, 0.0, fb.where(x <= 3.0, x / 3.0 + 0.5, 1.0))


def hardswish_d2f(x: Tensor) -> Tensor:
    return ((x >= -3.0) & (x <= 3.0)).to(x.dtype) / 3.0


def softplus_f(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    bx = x * beta
    return fb.where(bx > threshold, x, fb.log1p(fb.exp(fb.clamp_max(bx, threshold))) / beta)


def softplus_df(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    bx = x * beta
    return fb.where(bx > threshold, 1.0, _sigmoid(bx))


def softplus_d2f(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    bx = x * beta
    s = _sigmoid(bx)
    return fb.where(bx > threshold, 0.0, s * (-s + 1.0) * beta)


# -- the ops without a backward op: derivative only ----------------------------------------------

def hardtanh_f(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    if not x.dtype.is_floating_point:  # integers stay integers, as in PyTorch
        return fb.clamp(x, math.ceil(min_val), math.floor(max_val))
    # not clamp: its gradient is 1 at the bounds, hardtanh's is 0 there (and NaN passes both tests)
    return fb.where(x <= min_val, min_val, fb.where(x >= max_val, max_val, x))


def hardtanh_df(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    # 0 at the bounds, as PyTorch's hardtanh_backward
    return ((x > min_val) & (x < max_val)).to(x.dtype)


def hardsigmoid_f(x: Tensor) -> Tensor:
    return fb.where(x <= -3.0, 0.0, fb.where(x >= 3.0, 1.0, x / 6.0 + 0.5))  # gradient 0 at +-3, as PyTorch's


def hardsigmoid_df(x: Tensor) -> Tensor:
    return ((x > -3.0) & (x < 3.0)).to(x.dtype) / 6.0


def logsigmoid_f(x: Tensor) -> Tensor:
    # min(x, 0) - log1p(exp(-|x|)): no overflow on either side
    return fb.clamp_max(x, 0) - fb.log1p(fb.exp(-fb.abs(x)))


def logsigmoid_df(x: Tensor) -> Tensor:
    return _sigmoid(-x)


def softshrink_f(x: Tensor, lambd: float = 0.5) -> Tensor:
    return fb.where(x > lambd, x - lambd, fb.where(x < -lambd, x + lambd, x * 0.0))


def softshrink_df(x: Tensor, lambd: float = 0.5) -> Tensor:
    return ((x > lambd) | (x < -lambd)).to(x.dtype)


def softsign_f(x: Tensor) -> Tensor:
    return x / (fb.abs(x) + 1.0)


def softsign_df(x: Tensor) -> Tensor:
    d = fb.abs(x) + 1.0
    return 1.0 / (d * d)


def tanhshrink_f(x: Tensor) -> Tensor:
    return x - fb.tanh(x)


def tanhshrink_df(x: Tensor) -> Tensor:
    t = fb.tanh(x)
    return t * t


# -- meta functions ------------------------------------------------------------------------------

def _gelu_check(input: Tensor, approximate: Any) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _elu_check(input: Tensor, alpha: Any, scale: Any, input_scale: Any) -> None:
    for name, value in (("alpha", alpha), ("scale", scale), ("input_scale", input_scale)):
        _number("elu", name, value)


def _leaky_relu_check(input: Tensor, negative_slope: Any) -> None:
    _number("leaky_relu", "negative_slope", negative_slope)


def _softplus_check(input: Tensor, beta: Any, threshold: Any) -> None:
    _number("softplus", "beta", beta)
    _number("softplus", "threshold", threshold)


def _hardtanh_check(input: Tensor, min_val: Any, max_val: Any) -> None:
    if _number("hardtanh", "min_val", min_val) > _number("hardtanh", "max_val", max_val):
        raise ValueError("min_val cannot be greater than max_val")


def _softshrink_check(input: Tensor, lambd: Any) -> None:
    if _number("softshrink", "lambd", lambd) < 0 and input._dtype in _FLOATING:
        top = float(fb.finfo(input._dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {type_name(input._dtype)}, "
                           f"but found {lambd:g}")


def _none(input: Tensor, *params: Any) -> None:
    return None


@dataclass(frozen=True)
class Activation:
    """One elementwise activation: its op's parameters (after ``input``), maths and checks."""

    name: str
    params: str  # the signature's parameters after ``input``, e.g. "negative_slope=0.01"
    kernel: str  # PyTorch's kernel name, for the error on integer inputs
    f: Callable[..., Tensor]
    df: Callable[..., Tensor]
    d2f: Callable[..., Tensor] | None = None  # set: the op has a fused backward op
    check: Callable[..., None] = _none
    inplace: bool = True
    doc: str = ""
    integers: str = ""  # "keep": integer inputs keep their dtype; "float": they give the default float

    @property
    def op(self) -> str:
        return f"nn_{self.name}"


ACTIVATIONS = (
    Activation("gelu", "approximate='none'", "GeluKernelImpl", gelu_f, gelu_df, gelu_d2f, _gelu_check, inplace=False,
               doc="``x * Phi(x)`` (Phi the standard normal CDF), or its tanh approximation."),
    Activation("silu", "", "silu_cpu", silu_f, silu_df, silu_d2f, doc="``x * sigmoid(x)``."),
    Activation("mish", "", "mish_cpu", mish_f, mish_df, mish_d2f, doc="``x * tanh(softplus(x))``."),
    Activation("leaky_relu", "negative_slope=0.01", "leaky_relu_cpu", leaky_relu_f, leaky_relu_df, leaky_relu_d2f,
               _leaky_relu_check,
               doc="``x`` where positive, else ``negative_slope * x``."),
    Activation("elu", "alpha=1.0, scale=1.0, input_scale=1.0", "elu_cpu", elu_f, elu_df, elu_d2f, _elu_check,
               doc="``scale * x`` where positive, else ``scale * alpha * (exp(input_scale * x) - 1)``."),
    Activation("hardswish", "", "hardswish_cpu", hardswish_f, hardswish_df, hardswish_d2f,
               doc="``x * relu6(x + 3) / 6``."),
    Activation("softplus", "beta=1.0, threshold=20.0", "softplus_cpu", softplus_f, softplus_df, softplus_d2f,
               _softplus_check, inplace=False,
               doc="``log(1 + exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``."),
    Activation("hardtanh", "min_val=-1.0, max_val=1.0", "hardtanh_cpu", hardtanh_f, hardtanh_df,
               check=_hardtanh_check, integers="keep", doc="``x`` clamped to [min_val, max_val]."),
    Activation("hardsigmoid", "", "hardsigmoid_cpu", hardsigmoid_f, hardsigmoid_df, doc="``relu6(x + 3) / 6``."),
    Activation("logsigmoid", "", "log_sigmoid_cpu", logsigmoid_f, logsigmoid_df, inplace=False,
               doc="``log(sigmoid(x))``, computed stably."),
    Activation("softshrink", "lambd=0.5", "softshrink_check", softshrink_f, softshrink_df, check=_softshrink_check,
               inplace=False, doc="``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."),
    Activation("softsign", "", "softsign", softsign_f, softsign_df, inplace=False, integers="float",
               doc="``x / (1 + |x|)``."),
    Activation("tanhshrink", "", "tanhshrink", tanhshrink_f, tanhshrink_df, inplace=False, integers="float",
               doc="``x - tanh(x)``."),
)
BY_NAME = {a.name: a for a in ACTIVATIONS}


def _forward_meta(act: Activation) -> Callable[..., tuple]:
    def meta(input: Tensor, *params: Any) -> tuple:
        act.check(input, *params)
        if act.integers == "keep" and input._dtype not in (_dtypes.bool,) and not input._dtype.is_complex:
            return input._data.shape, input._dtype
        if act.integers == "float" and not input._dtype.is_complex:
            return input._data.shape, to_float(input._dtype)
        check_floating(act.kernel, input)
        return input._data.shape, input._dtype
    return meta


def _backward_meta(act: Activation) -> Callable[..., tuple]:
    def meta(grad_output: Tensor, input: Tensor, *params: Any) -> tuple:
        act.check(input, *params)
        check_floating(act.kernel, input)
        if grad_output._data.shape != input._data.shape or grad_output._dtype is not input._dtype:
            raise RuntimeError(f"{act.op}_backward: grad_output ({fmt_shape(grad_output._data.shape)}, "
                               f"{grad_output._dtype}) must match input ({fmt_shape(input._data.shape)}, "
                               f"{input._dtype})")
        return input._data.shape, input._dtype
    return meta


_HALF = (_dtypes.float16, _dtypes.bfloat16)


def _backward_composite(act: Activation) -> Callable[..., Tensor]:
    def composite(grad_output: Tensor, input: Tensor, *params: Any) -> Tensor:
        dt = input._dtype
        if dt in _HALF:  # the derivative's several steps in float32, rounded once (as PyTorch's opmath)
            return (grad_output.to(_dtypes.float32) * act.df(input.to(_dtypes.float32), *params)).to(dt)
        return grad_output * act.df(input, *params)
    return composite


# -- glu -----------------------------------------------------------------------------------------

def _glu_meta(input: Tensor, dim: Any = -1) -> tuple:
    shape = list(input._data.shape)
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    check_floating("glu_cpu", input)
    d = wrap_dim(dim, len(shape))
    if shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {shape[d]}")
    shape[d] //= 2
    return tuple(shape), input._dtype


def glu_halves(input: Tensor, dim: Any = -1) -> tuple[Tensor, Tensor]:
    d = wrap_dim(dim, input.ndim)
    half = input.shape[d] // 2
    return input.narrow(d, 0, half), input.narrow(d, half, half)


def _glu(input: Tensor, dim: Any = -1) -> Tensor:
    a, b = glu_halves(input, dim)
    return a * _sigmoid(b)


def declarations() -> list[OpDecl]:
    decls = []
    for act in ACTIVATIONS:
        params = f", {act.params}" if act.params else ""
        decls.append(OpDecl(act.op, f"(input: Tensor{params})", _forward_meta(act), composite=act.f,
                            inplace=act.inplace, method=False, export=False, elementwise=True,
                            doc=act.doc + " (flambeau-nn)"))
        if act.d2f is not None:
            decls.append(OpDecl(f"{act.op}_backward", f"(grad_output: Tensor, input: Tensor{params})",
                                _backward_meta(act), composite=_backward_composite(act), method=False,
                                export=False, elementwise=True,
                                doc=f"The gradient of {act.op}: ``grad_output * f'(input)`` (flambeau-nn)."))
    decls.append(OpDecl("nn_glu", "(input: Tensor, dim=-1)", _glu_meta, composite=_glu, method=False, export=False,
                        doc="The gated linear unit: ``a * sigmoid(b)`` for the halves a, b of ``input`` along "
                            "``dim`` (flambeau-nn)."))
    return decls

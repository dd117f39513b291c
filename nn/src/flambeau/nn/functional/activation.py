"""Functional forms: activation (torch.nn.functional's activations, softmax family aside).

The functions PyTorch keeps in its tensor namespace (relu, threshold, hardshrink, selu, celu, prelu,
rrelu) call core-tensor's ops; the rest call flambeau-nn's ``nn_*`` ops. ``inplace=True`` calls an
op's in-place form, which writes into ``input`` and returns it.
"""
from __future__ import annotations

import flambeau as fb
from flambeau._tensor import Tensor
from flambeau.ops import fn

__all__ = [
    "threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "hardswish", "relu6", "elu", "elu_",
    "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "glu", "gelu",
    "logsigmoid", "hardshrink", "softshrink", "tanhshrink", "softsign", "softplus", "sigmoid", "hardsigmoid", "tanh",
    "silu", "mish",
]

# Ops are looked up at call time through ``flambeau.ops.fn`` (a plain attribute read once cached):
# this module is imported while flambeau-nn's op plugin loads, before the ops exist.
_ops = fn


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where it is greater than ``threshold``, else ``value``.

    Args:
        input: the input tensor.
        threshold: the value to threshold at.
        value: the value to replace with.
        inplace: write the result into ``input``.
    """
    return (fb.threshold_ if inplace else fb.threshold)(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return fb.threshold_(input, threshold, value)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (NaN stays NaN; the gradient at 0 is 0)."""
    return fb.relu_(input) if inplace else fb.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return fb.relu_(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (the gradient is 0 at and beyond the bounds)."""
    return (_ops.nn_hardtanh_ if inplace else _ops.nn_hardtanh)(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return _ops.nn_hardtanh_(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``: :func:`hardtanh` over ``[0, 6]``."""
    return (_ops.nn_hardtanh_ if inplace else _ops.nn_hardtanh)(input, 0.0, 6.0)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * relu6(input + 3) / 6`` (Howard et al., 2019)."""
    return _ops.nn_hardswish_(input) if inplace else _ops.nn_hardswish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(input + 3) / 6``."""
    return _ops.nn_hardsigmoid_(input) if inplace else _ops.nn_hardsigmoid(input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``alpha * (exp(input) - 1)``."""
    return (_ops.nn_elu_ if inplace else _ops.nn_elu)(input, alpha, 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return _ops.nn_elu_(input, alpha, 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with SELU's ``alpha = 1.6732...`` and ``scale = 1.0507...``."""
    return fb.selu_(input) if inplace else fb.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return fb.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return (fb.celu_ if inplace else fb.celu)(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return fb.celu_(input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``negative_slope * input``."""
    return (_ops.nn_leaky_relu_ if inplace else _ops.nn_leaky_relu)(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`."""
    return _ops.nn_leaky_relu_(input, negative_slope)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``input`` where positive, else ``weight * input``; ``weight`` holds one slope, or one per
    channel (dim 1 of ``input``)."""
    return fb.prelu(input, weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: negative slopes drawn from ``U(lower, upper)`` for each element in
    training, ``(lower + upper) / 2`` otherwise."""
    return (fb.rrelu_ if inplace else fb.rrelu)(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place :func:`rrelu`."""
    return fb.rrelu_(input, lower, upper, training)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input`` along ``dim``."""
    return _ops.nn_glu(input, dim)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``input * Phi(input)`` (Phi the standard normal CDF); ``approximate='tanh'`` uses
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3)))``."""
    return _ops.nn_gelu(input, approximate)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(1 / (1 + exp(-input)))``, computed without overflow."""
    return _ops.nn_logsigmoid(input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, else 0."""
    return fb.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0."""
    return _ops.nn_softshrink(input, lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``input - tanh(input)``."""
    return _ops.nn_tanhshrink(input)


def softsign(input: Tensor) -> Tensor:
    """``input / (1 + |input|)``."""
    return _ops.nn_softsign(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input > threshold``."""
    return _ops.nn_softplus(input, beta, threshold)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return fb.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return fb.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (also called swish)."""
    return _ops.nn_silu_(input) if inplace else _ops.nn_silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))`` (Misra, 2019)."""
    return _ops.nn_mish_(input) if inplace else _ops.nn_mish(input)


"""Declarations of the activation and dropout functions PyTorch keeps in its tensor namespace:
``relu``, ``threshold``, ``hardshrink``, ``selu``, ``celu``, ``prelu``, ``rrelu``, ``dropout``,
``alpha_dropout``, ``feature_dropout``, ``feature_alpha_dropout`` (and their in-place forms).

flambeau-nn's functional forms call these. ``relu`` has kernels; the others are composites of
pointwise ops (so autograd differentiates through them). The dropout family draws its masks from
``_dropout_mask``, a random op that a backend may fuse (draw, compare and scale in one pass).
"""
from __future__ import annotations

import math
from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import type_name
from .random import FLOATING, check_generator

#: SELU's constants (Klambauer et al., 2017), as PyTorch writes them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
#: alpha * scale: the negative saturation value alpha dropout keeps dropped units at.
ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _not_implemented(kernel: str, d: _dtypes.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')


def _number(op: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(value).__name__}")
    return value


def _floating(kernel: str, input: Tensor) -> tuple:
    if input._dtype not in FLOATING:
        raise _not_implemented(kernel, input._dtype)
    return input._data.shape, input._dtype


# -- relu, threshold, hardshrink -----------------------------------------------------------------

def _relu_meta(input: Tensor) -> tuple:
    d = input._dtype
    if d is _dtypes.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if d.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return input._data.shape, d


def _relu(input: Tensor) -> Tensor:
    # not clamp_min: its gradient at 0 is 1, relu's is 0; NaN is not <= 0, so it passes through
    return _fn("where")(input <= 0, 0, input)


def _threshold_meta(input: Tensor, threshold: Any, value: Any) -> tuple:
    _number("threshold", "threshold", threshold)
    _number("threshold", "value", value)
    d = input._dtype
    if d is _dtypes.bool or d.is_complex:
        raise _not_implemented("threshold_cpu", d)
    return input._data.shape, d


def _threshold(input: Tensor, threshold: Any, value: Any) -> Tensor:
    # PyTorch's kernel tests x <= threshold: NaN fails that test, so it passes through
    return _fn("where")(input <= threshold, value, input)


def _hardshrink_meta(input: Tensor, lambd: Any = 0.5) -> tuple:
    _number("hardshrink", "lambd", lambd)
    return _floating("hardshrink_cpu", input)


def _hardshrink(input: Tensor, lambd: Any = 0.5) -> Tensor:
    keep = (input > lambd) | (input < -lambd) | (input != input)  # NaN passes through, as in PyTorch
    return _fn("where")(keep, input, 0)


# -- selu, celu ----------------------------------------------------------------------------------

def _elu_like(input: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    """``scale * x`` above 0, ``scale * alpha * (exp(input_scale * x) - 1)`` at and below it."""
    negative = _fn("expm1")(_fn("clamp_max")(input, 0) * input_scale) * (alpha * scale)
    return _fn("where")(input > 0, input * scale, negative)


def _selu_meta(input: Tensor) -> tuple:
    return _floating("elu_cpu", input)


def _selu(input: Tensor) -> Tensor:
    return _elu_like(input, SELU_ALPHA, SELU_SCALE, 1.0)


def _celu_meta(input: Tensor, alpha: Any = 1.0) -> tuple:
    if _number("celu", "alpha", alpha) == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _floating("elu_cpu", input)


def _celu(input: Tensor, alpha: Any = 1.0) -> Tensor:
    return _elu_like(input, alpha, 1.0, 1.0 / alpha)


# -- prelu ---------------------------------------------------------------------------------------

def _prelu_meta(input: Tensor, weight: Tensor) -> tuple:
    shape = input._data.shape
    if input._dtype not in FLOATING:
        raise _not_implemented("prelu_cpu", input._dtype)
    if weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._dtype)} but found {type_name(weight._dtype)}")
    if weight._data.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
                           f"{weight._data.ndim}")
    n = weight._data.size
    if len(shape) == 0:
        if n != 1:
            raise RuntimeError("Not allow zero-dim input tensor.")
    elif n != 1:
        channels = shape[1] if len(shape) >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
    return shape, input._dtype


def _prelu(input: Tensor, weight: Tensor) -> Tensor:
    ndim = input._data.ndim
    if weight._data.size != 1 and ndim >= 2:
        weight = weight.reshape((-1,) + (1,) * (ndim - 2))  # one slope per channel (dim 1)
    elif weight._data.ndim:
        weight = weight.reshape(())
    return _fn("where")(input > 0, input, input * weight)


# -- rrelu ---------------------------------------------------------------------------------------

def _rrelu_meta(input: Tensor, lower: Any = 1.0 / 8.0, upper: Any = 1.0 / 3.0, training: bool = False,
                generator: Any = None) -> tuple:
    check_generator("rrelu", generator, input._device)
    if _number("rrelu", "lower", lower) > _number("rrelu", "upper", upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return _floating("rrelu_with_noise_out_cpu", input)


def _rrelu(input: Tensor, lower: Any = 1.0 / 8.0, upper: Any = 1.0 / 3.0, training: bool = False,
           generator: Any = None) -> Tensor:
    if not training:
        slope = (lower + upper) / 2.0
        return _fn("where")(input >= 0, input, input * slope)
    # a slope drawn from U(lower, upper) for each element at or below 0 (PyTorch's noise)
    slopes = _fn("uniform")(input, lower, upper, generator=generator)
    return _fn("where")(input > 0, input, input * slopes)


# -- dropout -------------------------------------------------------------------------------------

def _check_p(p: Any) -> float:
    p = _number("dropout", "p", p)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def _dropout_mask_meta(input: Tensor, p: Any, generator: Any = None) -> tuple:
    check_generator("_dropout_mask", generator, input._device)
    if _check_p(p) == 1:
        raise RuntimeError("_dropout_mask: p must be below 1 (dropout with p=1 needs no mask)")
    return _floating("bernoulli_scalar_cpu_", input)


def _dropout_mask(input: Tensor, p: Any, generator: Any = None) -> Tensor:
    # The same draws as bernoulli(input, 1 - p) (one uniform per element, kept when below 1 - p), so
    # that a backend's fused kernel and this composite give the same mask for the same seed.
    keep = 1.0 - p
    return _fn("bernoulli")(input, keep, generator=generator) * (1.0 / keep)


def _dropout_meta(name: str, feature: bool):
    def meta(input: Tensor, p: Any, train: Any) -> tuple:
        _check_p(p)
        if feature and train and input._data.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        if train and p > 0 and input._dtype not in FLOATING:  # the float mask cannot scale it in place
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{type_name(input._dtype)}")
        return input._data.shape, input._dtype
    return meta


def _noise_shape(input: Tensor, feature: bool) -> tuple:
    shape = tuple(input._data.shape)
    return shape[:2] + (1,) * (len(shape) - 2) if feature else shape


def _dropout_impl(alpha: bool, feature: bool):
    """PyTorch's ``_dropout_impl``: one of the four dropouts, as a composite."""
    def composite(input: Tensor, p: Any, train: Any) -> Tensor:
        if p == 0 or not train or input._data.size == 0:
            return input
        if p == 1:
            return input * 0.0
        carrier = input if not feature else input.new_empty(_noise_shape(input, True))
        mask = _fn("_dropout_mask")(carrier, p)  # 0, or 1 / (1 - p)
        if not alpha:
            return input * mask
        # kept units scaled by a, dropped ones set to alpha' a (the SELU saturation), shifted by b:
        # the output keeps zero mean and unit variance for a standard normal input
        a = 1.0 / math.sqrt((ALPHA_DROPOUT_ALPHA ** 2 * p + 1.0) * (1.0 - p))
        kept = mask * (1.0 - p)  # 0 or 1
        b = (kept - 1.0) * (ALPHA_DROPOUT_ALPHA * a) + ALPHA_DROPOUT_ALPHA * a * p
        return input * (kept * a) + b
    return composite


# -- the declarations ----------------------------------------------------------------------------

def declarations() -> list[OpDecl]:
    decls = [
        OpDecl("relu", "(input: Tensor)", _relu_meta, composite=_relu, inplace=True,
               doc="The rectified linear unit, ``max(input, 0)`` elementwise (NaN stays NaN)."),
        OpDecl("threshold", "(input: Tensor, threshold, value)", _threshold_meta, composite=_threshold,
               inplace=True, method=False,
               doc="``input`` where it is above ``threshold``, else ``value``."),
        OpDecl("hardshrink", "(input: Tensor, lambd=0.5)", _hardshrink_meta, composite=_hardshrink,
               doc="``input`` where ``|input| > lambd``, else 0."),
        OpDecl("selu", "(input: Tensor)", _selu_meta, composite=_selu, inplace=True, method=False,
               doc="The scaled exponential linear unit: ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``."),
        OpDecl("celu", "(input: Tensor, alpha=1.0)", _celu_meta, composite=_celu, inplace=True, method=False,
               doc="``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."),
        OpDecl("prelu", "(input: Tensor, weight: Tensor)", _prelu_meta, composite=_prelu,
               doc="``input`` where positive, else ``weight * input`` (one slope, or one per channel of dim 1)."),
        OpDecl("rrelu", "(input: Tensor, lower=0.125, upper=0.3333333333333333, training=False, generator=None)",
               _rrelu_meta, composite=_rrelu, inplace=True, method=False, random=True,
               doc="Leaky ReLU whose negative slopes are drawn from U(lower, upper) in training, and are "
                   "``(lower + upper) / 2`` otherwise."),
        OpDecl("_dropout_mask", "(input: Tensor, p, *, generator=None)", _dropout_mask_meta,
               composite=_dropout_mask, method=False, export=False, random=True, differentiable=False,
               doc="A dropout mask shaped like ``input``: ``1 / (1 - p)`` with probability ``1 - p``, else 0."),
    ]
    for decl in decls[:5]:  # relu ... celu: each output element from the input's at its index (keeps layouts)
        decl.elementwise = True
    for name, alpha, feature in (("dropout", False, False), ("alpha_dropout", True, False),
                                 ("feature_dropout", False, True), ("feature_alpha_dropout", True, True)):
        decls.append(OpDecl(
            name, "(input: Tensor, p, train)", _dropout_meta("bernoulli_scalar_cpu_", feature),
            composite=_dropout_impl(alpha, feature), inplace=True, method=False, random=True,
            doc=f"{'Alpha d' if alpha else 'D'}ropout{' of whole channels (dim 1)' if feature else ''} with "
                "probability ``p`` when ``train``; the input itself otherwise."))
    return decls

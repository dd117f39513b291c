"""Cases for the activation and dropout ops of ``flambeau._core_ops.activation``."""
from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import UNARY_SHAPES, same, unary

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
FLOATS = P.FLOATS
_REAL_NONBOOL = P.INTS + P.FLOATS


def _with(*params, **opts):
    """Every unary shape and layout, with ``params`` after the input."""
    def samples(dtype: str) -> list[Sample]:
        return [Sample((Arg(shape, dtype, layout, **opts), *params)) for shape, layout in UNARY_SHAPES]
    return samples


def _relu_errors():
    return [ErrorCase((Arg((3,), "bool"),), RuntimeError, "Boolean inputs not supported for relu"),
            ErrorCase((Arg((3,), "complex64"),), NotImplementedError, "clamp is not supported for complex types")]


def _float_only(kernel: str, *params):
    def errors():
        return [ErrorCase((Arg((3,), "int64"), *params), NotImplementedError,
                          f'"{kernel}" not implemented for \'Long\'')]
    return errors


def _elu(x, alpha, scale, input_scale):
    return np.where(x > 0, scale * x, scale * alpha * np.expm1(np.minimum(x, 0) * input_scale))


def _prelu_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((2, 3, 4), dtype), Arg((3,), dtype, low=0.0, high=1.0))),
            Sample((Arg((4, 5), dtype, "transposed"), Arg((1,), dtype, low=0.0, high=1.0))),
            Sample((Arg((), dtype), Arg((1,), dtype, low=0.0, high=1.0)))]


def _prelu_ref(x, w):
    w = w.reshape((-1,) + (1,) * (x.ndim - 2)) if x.ndim >= 2 and w.size > 1 else w.reshape(())
    return np.where(x > 0, x, x * w)


def _prelu_errors():
    return [ErrorCase((Arg((2, 3), "float32"), Arg((2,), "float32")), RuntimeError,
                      "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and "
                      "channel size = 3."),
            ErrorCase((Arg((), "float32"), Arg((2,), "float32")), RuntimeError, "Not allow zero-dim input tensor.")]


def _rrelu_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout), 0.1, 0.3, True)) for shape, layout in UNARY_SHAPES] + \
        [Sample((Arg((3, 4), dtype, "transposed"), 0.125, 0.25, False))]


def _rrelu_ref(x, lower=0.125, upper=1 / 3, training=False, generator=None):
    if not training:
        low = high = np.where(x >= 0, x, x * (lower + upper) / 2)
    else:
        low, high = np.where(x > 0, x, x * upper), np.where(x > 0, x, x * lower)
    slack = 1e-2 * np.abs(x)  # the product rounds in the tensor's dtype
    return low - slack, high + slack


# probabilities whose scale 1 / (1 - p) every float dtype holds exactly: the support check is exact
def _mask_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout), 0.5)) for shape, layout in UNARY_SHAPES] + \
        [Sample((Arg((5, 7), dtype), 0.0)), Sample((Arg((5, 7), dtype), 0.75))]


def _mask_ref(x, p, generator=None):
    return np.zeros(x.shape), np.full(x.shape, 1 / (1 - p))


def _dropout_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg((2, 3, 4), dtype), 0.5, True)), Sample((Arg((3, 4), dtype, "transposed"), 0.75, True)),
           Sample((Arg((3, 4), dtype), 0.5, False)), Sample((Arg((3, 4), dtype), 1.0, True)),
           Sample((Arg((0, 4), dtype), 0.5, True))]
    return out


def _dropout_ref(alpha: bool, feature: bool):
    def ref(x, p, train):
        if not train or p == 0:
            return x, x
        if p == 1:
            return np.zeros(x.shape), np.zeros(x.shape)
        if not alpha:
            kept = x / (1 - p)
            return np.minimum(kept, 0), np.maximum(kept, 0)
        a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
        dropped = np.full(x.shape, -1.7580993408473766 * a + 1.7580993408473766 * a * p)
        kept = x * a + 1.7580993408473766 * a * p
        low, high = np.minimum(kept, dropped), np.maximum(kept, dropped)
        slack = 1e-2 * (1 + np.abs(low) + np.abs(high))  # a and b round in the tensor's dtype
        return low - slack, high + slack
    return ref


def _dropout_errors(name: str):
    def errors():
        return [ErrorCase((Arg((3,), "float32"), 1.5, True), RuntimeError,
                          "dropout probability has to be between 0 and 1, but got 1.5")]
    return errors


def cases() -> list[OpCase]:
    out = [
        OpCase("relu", _REAL_NONBOOL, unary(), lambda x: np.maximum(x, 0).astype(x.dtype), same, errors=_relu_errors),
        OpCase("threshold", _REAL_NONBOOL, _with(1, 3), lambda x, t, v: np.where(x > t, x, v).astype(x.dtype), same),
        OpCase("hardshrink", FLOATS, _with(0.5), lambda x, lambd: np.where(np.abs(x) > lambd, x, 0), same,
               errors=_float_only("hardshrink_cpu", 0.5)),
        OpCase("selu", FLOATS, unary(), lambda x: _elu(x, SELU_ALPHA, SELU_SCALE, 1.0), same,
               errors=_float_only("elu_cpu")),
        OpCase("celu", FLOATS, _with(1.5), lambda x, a: _elu(x, a, 1.0, 1.0 / a), same,
               errors=_float_only("elu_cpu", 1.0)),
        OpCase("prelu", FLOATS, _prelu_samples, _prelu_ref, same, errors=_prelu_errors),
        OpCase("rrelu", FLOATS, _rrelu_samples, _rrelu_ref, same,
               errors=_float_only("rrelu_with_noise_out_cpu")),
        OpCase("_dropout_mask", FLOATS, _mask_samples, _mask_ref, same,
               errors=lambda: [ErrorCase((Arg((3,), "float32"), 1.0), RuntimeError, "p must be below 1")]),
    ]
    for name, alpha, feature in (("dropout", False, False), ("alpha_dropout", True, False),
                                 ("feature_dropout", False, True), ("feature_alpha_dropout", True, True)):
        out.append(OpCase(name, FLOATS, _dropout_samples, _dropout_ref(alpha, feature), same,
                          errors=_dropout_errors(name)))
    return out

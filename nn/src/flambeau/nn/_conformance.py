"""Conformance cases for flambeau-nn's ops (entry point ``flambeau.testing: nn``).

The backend conformance kit (``pytest --pyargs flambeau.testing --flambeau-backend NAME``) runs every
declared op against a numpy reference; these are nn's cases, one family per helper function.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _linear_ref(x: Any, w: Any, b: Any = None) -> Any:
    out = x @ w.T
    return out if b is None else out + b


def _linear_samples(dtype: str) -> list[Sample]:
    a = lambda *shape, layout="contiguous": Arg(shape, dtype, layout)  # noqa: E731
    return [
        Sample((a(3, 4), a(5, 4), a(5))),
        Sample((a(2, 3, 4), a(5, 4, layout="transposed"), None), note="3-D input, transposed weight"),
        Sample((a(4), a(5, 4), a(5, layout="sliced")), note="1-D input"),
        Sample((a(3, 4), a(4), a())), Sample((a(0, 4), a(2, 4), a(2)), note="empty batch"),
        Sample((a(3, 0), a(2, 0), a(2)), note="no input features"),
    ]


def _linear_errors() -> list[ErrorCase]:
    f = lambda *shape, dtype="float32": Arg(shape, dtype)  # noqa: E731
    return [
        ErrorCase((f(2, 3), f(5, 4)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        ErrorCase((f(2, 3), f(5, 3, dtype="float64")), RuntimeError, "mat1 and mat2 must have the same dtype"),
        ErrorCase((f(2, 3), f(5, 3), f(4)), RuntimeError, "must match the size of tensor b"),
    ]


def _bilinear_ref(x1: Any, x2: Any, w: Any, b: Any = None) -> Any:
    out = np.einsum("...i,oij,...j->...o", x1, w, x2)
    return out if b is None else out + b


def _bilinear_samples(dtype: str) -> list[Sample]:
    a = lambda *shape, layout="contiguous": Arg(shape, dtype, layout)  # noqa: E731
    return [
        Sample((a(3, 4), a(3, 2), a(5, 4, 2), a(5))),
        Sample((a(2, 3, 4), a(2, 3, 2, layout="sliced"), a(5, 4, 2), None), note="3-D inputs"),
    ]


def _bilinear_errors() -> list[ErrorCase]:
    f = lambda *shape: Arg(shape, "float32")  # noqa: E731
    return [ErrorCase((f(2, 3), f(2, 3), f(1, 4, 3)), RuntimeError,
                      "input1 size does not match weight size: got 3 but expected 4")]


def _linear_cases() -> list[OpCase]:
    tol = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
    return [
        OpCase("nn_linear", _FLOATS, _linear_samples, _linear_ref, lambda s: s.args[0].dtype,
               errors=_linear_errors, tolerances=tol),
        OpCase("nn_bilinear", _FLOATS, _bilinear_samples, _bilinear_ref, lambda s: s.args[0].dtype,
               errors=_bilinear_errors, tolerances={"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1)}),
    ]


# -- activation ----------------------------------------------------------------------------------

#: shapes and layouts every elementwise activation is tried on
_LAYOUTS = (((3, 4), "contiguous"), ((4, 5), "transposed"), ((6,), "sliced"), ((), "contiguous"),
            ((0, 3), "contiguous"), ((2, 3, 5), "contiguous"))


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


_K, _C = math.sqrt(2.0 / math.pi), 0.044715


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(_K * (x + _C * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_df(x, approximate="none"):
    if approximate == "tanh":
        t = np.tanh(_K * (x + _C * x ** 3))
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _K * (1.0 + 3.0 * _C * x * x)
    return 0.5 * (1.0 + _erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _mish_df(x):
    t = np.tanh(_softplus(x))
    return t + x * _sigmoid(x) * (1.0 - t * t)


#: name -> (params per sample, f, df or None when the op has no backward op)
_ACTIVATIONS = {
    "gelu": ([("none",), ("tanh",)], _gelu, _gelu_df),
    "silu": ([()], lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x)))),
    "mish": ([()], lambda x: x * np.tanh(_softplus(x)), _mish_df),
    "leaky_relu": ([(0.01,), (0.3,)], lambda x, s: np.where(x > 0, x, x * s), lambda x, s: np.where(x > 0, 1.0, s)),
    "elu": ([(1.0, 1.0, 1.0), (0.5, 1.5, 2.0)],
            lambda x, a, s, i: np.where(x > 0, s * x, s * a * np.expm1(np.minimum(x, 0) * i)),
            lambda x, a, s, i: np.where(x > 0, s, s * a * i * np.exp(np.minimum(x, 0) * i))),
    "hardswish": ([()], lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
                  lambda x: np.where(x < -3.0, 0.0, np.where(x <= 3.0, x / 3.0 + 0.5, 1.0))),
    "softplus": ([(1.0, 20.0), (2.0, 3.0)], _softplus,
                 lambda x, b, t: np.where(x * b > t, 1.0, _sigmoid(x * b))),
    "hardtanh": ([(-1.0, 1.0), (0.0, 6.0)], lambda x, lo, hi: np.clip(x, lo, hi), None),
    "hardsigmoid": ([()], lambda x: np.clip(x + 3.0, 0.0, 6.0) / 6.0, None),
    "logsigmoid": ([()], lambda x: -np.logaddexp(0.0, -x), None),
    "softshrink": ([(0.5,), (1.5,)], lambda x, lambd: np.where(x > lambd, x - lambd,
                                                               np.where(x < -lambd, x + lambd, 0.0)), None),
    "softsign": ([()], lambda x: x / (1.0 + np.abs(x)), None),
    "tanhshrink": ([()], lambda x: x - np.tanh(x), None),
}
_KERNEL_NAMES = {"gelu": "GeluKernelImpl", "logsigmoid": "log_sigmoid_cpu", "softshrink": "softshrink_check"}

# float16 and bfloat16 carry 3 and 2 significant digits
_TOLERANCES = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}


def _forward_samples(params_list):
    def samples(dtype: str) -> list[Sample]:
        out = [Sample((Arg(shape, dtype, layout, low=-6.0, high=6.0), *params_list[0])) for shape, layout in _LAYOUTS]
        out += [Sample((Arg((3, 4), dtype, "transposed"), *params)) for params in params_list[1:]]
        return out
    return samples


def _backward_samples(params_list):
    def samples(dtype: str) -> list[Sample]:
        out = [Sample((Arg(shape, dtype, layout), Arg(shape, dtype, layout, low=-6.0, high=6.0), *params_list[0]))
               for shape, layout in _LAYOUTS]
        out += [Sample((Arg((3, 4), dtype), Arg((3, 4), dtype, "transposed"), *params)) for params in params_list[1:]]
        return out
    return samples


def _first(sample: Sample) -> str:
    return next(a.dtype for a in sample.args if isinstance(a, Arg))


def _integer_error(op: str, kernel: str, params):
    def errors():
        return [ErrorCase((Arg((3,), "int64"), *params), NotImplementedError,
                          f'"{kernel}" not implemented for \'Long\'')]
    return errors


def _glu_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype),)), Sample((Arg((4, 6), dtype, "transposed"), 0)),
            Sample((Arg((2, 4, 3), dtype), 1)), Sample((Arg((0, 2), dtype), -1))]


def _glu_ref(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid(b)


def _glu_errors():
    return [ErrorCase((Arg((2, 3), "float32"),), RuntimeError,
                      "Halving dimension must be even, but dimension 1 is size 3"),
            ErrorCase((Arg((), "float32"),), RuntimeError, "glu does not support scalars")]


def _activation_cases() -> list[OpCase]:
    out = []
    for name, (params_list, f, df) in _ACTIVATIONS.items():
        kernel = _KERNEL_NAMES.get(name, f"{name}_cpu")
        integers_ok = name in ("hardtanh", "softsign", "tanhshrink")  # PyTorch takes integer inputs there
        out.append(OpCase(f"nn_{name}", _FLOATS, _forward_samples(params_list), f, _first,
                          errors=(lambda: []) if integers_ok else _integer_error(f"nn_{name}", kernel, params_list[0]),
                          tolerances=_TOLERANCES))
        if df is not None:
            out.append(OpCase(f"nn_{name}_backward", _FLOATS, _backward_samples(params_list),
                              lambda g, x, *p, df=df: g * df(x, *p), _first, tolerances=_TOLERANCES))
    out.append(OpCase("nn_glu", _FLOATS, _glu_samples, _glu_ref, _first, errors=_glu_errors,
                      tolerances=_TOLERANCES))
    return out


_LOOSE = {"float16": (1e-2, 2e-2), "bfloat16": (5e-2, 1e-1)}


# -- losses: nn_nll_loss, nn_cross_entropy and their backward ops -------------------------------------

#: (N, C, targets, ignore_index): plain rows, an ignored row, an empty batch, a wide row (the fused loops' blocks).
_ROWS = [
    (5, 4, [0, 3, 1, 2, 3], -100),
    (4, 3, [2, 1, 1, 0], 1),
    (0, 3, [], -100),
    (3, 1000, [999, 0, 500], -100),
    (2, 3, [-100, -100], -100),
]


def _loss_samples(smoothing: bool, backward: bool):
    def samples(dtype: str) -> list[Sample]:
        out = []
        for n, c, targets, ignore in _ROWS:
            for reduction in ("none", "mean", "sum"):
                for weighted in (False, True):
                    weight = Arg((c,), dtype, low=0.1, high=2.0) if weighted else None
                    args: tuple = (Arg((n, c), dtype), Arg((n,), "int64", values=targets), weight, reduction, ignore)
                    if smoothing:
                        args = args + (0.0 if reduction == "sum" else 0.2,)
                    if backward:
                        grad = Arg((n,) if reduction == "none" else (), dtype)
                        args = (grad,) + args
                    out.append(Sample(args))
        return out
    return samples


def _picked(target, weight, ignore_index, c):
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    w = np.ones(len(target)) if weight is None else weight[safe].astype(np.float64)
    return safe, w * kept, kept


def _reduce(losses, w, reduction):
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.array(losses.sum())
    with np.errstate(all="ignore"):
        return np.array(losses.sum() / w.sum())


def _log_softmax(x):
    if x.shape[1] == 0:
        return x
    s = x - x.max(axis=1, keepdims=True, initial=-np.inf)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


def _nll_ref(x, target, weight, reduction, ignore_index):
    safe, w, _ = _picked(target, weight, ignore_index, x.shape[1])
    picked = x[np.arange(len(target)), safe] if len(target) else np.zeros(0)
    return _reduce(-picked * w, w, reduction)


def _scales(g, w, kept, reduction, n):
    with np.errstate(all="ignore"):
        s = np.broadcast_to(g / w.sum() if reduction == "mean" else g, (n,))
    return np.where(kept, s, 0.0)


def _nll_backward_ref(g, x, target, weight, reduction, ignore_index):
    n = len(target)
    safe, w, kept = _picked(target, weight, ignore_index, x.shape[1])
    out = np.zeros(x.shape)
    s = _scales(g, w, kept, reduction, n)
    out[np.arange(n)[kept], safe[kept]] = -(w * s)[kept]
    return out


def _ce_ref(x, target, weight, reduction, ignore_index, eps):
    n, c = x.shape
    logp = _log_softmax(x)
    safe, w, kept = _picked(target, weight, ignore_index, c)
    losses = -logp[np.arange(n), safe] * w if n else np.zeros(0)
    cw = np.ones(c) if weight is None else weight
    smooth = -(logp * cw).sum(axis=1) * kept
    return _reduce(losses * (1 - eps) + smooth * (eps / c), w, reduction)


def _ce_backward_ref(g, x, target, weight, reduction, ignore_index, eps):
    n, c = x.shape
    safe, w, kept = _picked(target, weight, ignore_index, c)
    s = _scales(g, w, kept, reduction, n)
    cw = np.ones(c) if weight is None else weight
    p = np.exp(_log_softmax(x))
    out = p * (s * (w * (1 - eps) + cw.sum() * eps / c))[:, None] - (s[:, None] * eps / c) * cw
    out[np.arange(n)[kept], safe[kept]] -= (s * w * (1 - eps))[kept]
    return out


def _dtype_of_input(backward: bool):
    def result_dtype(sample: Sample) -> str:
        return sample.args[1 if backward else 0].dtype
    return result_dtype


def _loss_errors():
    x, t = Arg((3, 4), "float32"), Arg((3,), "int64", values=[0, 1, 2])
    yield ErrorCase((x, Arg((3,), "float32"), None, "mean", -100), RuntimeError,
                    "expected scalar type Long but found Float")
    yield ErrorCase((x, Arg((3,), "int64", values=[0, 12, 1]), None, "mean", -100), IndexError,
                    "Target 12 is out of bounds.", data_dependent=True)
    yield ErrorCase((x, Arg((3,), "int64", values=[0, -1, 1]), None, "mean", -100), IndexError,
                    "Target -1 is out of bounds.", data_dependent=True)
    yield ErrorCase((x, Arg((4,), "int64", values=[0, 1, 2, 3]), None, "mean", -100), ValueError,
                    "Expected input batch_size (3) to match target batch_size (4).")
    yield ErrorCase((x, t, Arg((3,), "float32"), "mean", -100), RuntimeError,
                    "weight tensor should be defined either for all 4 classes or no classes")
    yield ErrorCase((x, t, None, "avg", -100), ValueError, "avg is not a valid value for reduction")


def _ce_errors():
    for case in _loss_errors():
        yield ErrorCase(case.args + (0.0,), case.exc, case.match, data_dependent=case.data_dependent)
    yield ErrorCase((Arg((3, 4), "float32"), Arg((3,), "int64", values=[0, 1, 2]), None, "mean", -100, 1.5),
                    RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5")


def _loss_cases() -> list[OpCase]:
    return [
        OpCase("nn_nll_loss", _FLOATS, _loss_samples(False, False), _nll_ref, _dtype_of_input(False),
               errors=_loss_errors, tolerances=_LOOSE),
        OpCase("nn_nll_loss_backward", _FLOATS, _loss_samples(False, True), _nll_backward_ref,
               _dtype_of_input(True), tolerances=_LOOSE),
        OpCase("nn_cross_entropy", _FLOATS, _loss_samples(True, False), _ce_ref, _dtype_of_input(False),
               errors=_ce_errors, tolerances=_LOOSE),
        OpCase("nn_cross_entropy_backward", _FLOATS, _loss_samples(True, True), _ce_backward_ref,
               _dtype_of_input(True), tolerances=_LOOSE),
    ]


def cases() -> list[OpCase]:
    """flambeau-nn's conformance cases (the ``flambeau.testing`` entry point)."""
    from ._norm_conformance import embedding_cases, norm_cases

    from . import (_conformance_conv, _conformance_padding, _conformance_pooling, _conformance_rnn,
                   _conformance_transformer, _conformance_vision)

    part2 = (_conformance_conv, _conformance_pooling, _conformance_padding, _conformance_vision, _conformance_rnn,
             _conformance_transformer)
    return [*_linear_cases(), *_activation_cases(), *_loss_cases(), *norm_cases(), *embedding_cases(),
            *(case for family in part2 for case in family.cases())]

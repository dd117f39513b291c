"""Conformance cases of the normalization and embedding ops (appended to ``_conformance.cases()``)."""
from __future__ import annotations

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOOSE = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1), "float32": (1e-4, 1e-5)}


def _stat(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


# -- layer norm --------------------------------------------------------------------------------------

def _layer_norm_ref(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = (x - mean) * rstd
    y = y * weight if weight is not None else y
    y = y + bias if bias is not None else y
    return y, mean, rstd


def _layer_norm_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((4, 6), dtype), (6,), Arg((6,), dtype), Arg((6,), dtype), 1e-5)),
        Sample((Arg((2, 3, 5), dtype, "transposed"), (3, 5), None, None, 1e-3), note="two dims, strided"),
        Sample((Arg((3, 40), dtype, low=90, high=110), (40,), Arg((40,), dtype), None, 1e-5), note="large mean"),
        Sample((Arg((5,), dtype, "sliced"), (5,), None, Arg((5,), dtype), 1e-5)),
    ]


def _layer_norm_errors() -> list[ErrorCase]:
    x = Arg((2, 3), "float32")
    return [
        ErrorCase((x, (4,), None, None, 1e-5), RuntimeError,
                  "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]"),
        ErrorCase((x, (3,), Arg((2,), "float32"), None, 1e-5), RuntimeError,
                  "Expected weight to be of same shape as normalized_shape"),
        ErrorCase((Arg((2, 3), "int64"), (3,), None, None, 1e-5), RuntimeError, "not implemented for 'Long'"),
    ]


def _layer_norm_backward_samples(dtype: str) -> list[Sample]:
    out = []
    for shape, k, weighted in (((4, 6), 1, True), ((2, 3, 5), 2, False), ((3, 33), 1, True)):
        lead = shape[:len(shape) - k]
        stats = lead + (1,) * k
        norm = shape[len(shape) - k:]
        out.append(Sample((Arg(shape, dtype), Arg(shape, dtype), Arg(stats, _stat(dtype)),
                           Arg(stats, _stat(dtype), low=0.5, high=2.0), norm,
                           Arg(norm, dtype) if weighted else None)))
    return out


def _layer_norm_backward_ref(g, x, mean, rstd, normalized_shape, weight=None):
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    xhat = (x - mean) * rstd
    gh = g * weight if weight is not None else g
    gx = rstd * (gh - gh.mean(axis=axes, keepdims=True) - xhat * (gh * xhat).mean(axis=axes, keepdims=True))
    return gx, (g * xhat).sum(axis=lead), g.sum(axis=lead)


# -- batch norm --------------------------------------------------------------------------------------

def _batch_norm_ref(x, weight, bias, running_mean, running_var, training, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    else:
        mean, var = np.asarray(running_mean, dtype=np.float64), np.asarray(running_var, dtype=np.float64)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    y = y * weight.reshape(shape) if weight is not None else y
    y = y + bias.reshape(shape) if bias is not None else y
    return y, mean, var


def _batch_norm_samples(dtype: str) -> list[Sample]:
    stat = _stat(dtype)
    rm, rv = Arg((3,), stat), Arg((3,), stat, low=0.5, high=2.0)
    return [
        Sample((Arg((4, 3), dtype), Arg((3,), dtype), Arg((3,), dtype), rm, rv, True, 1e-5)),
        Sample((Arg((2, 3, 5), dtype), None, None, None, None, True, 1e-5), note="no affine, no running stats"),
        Sample((Arg((2, 3, 2, 3), dtype), Arg((3,), dtype), None, rm, rv, False, 1e-3), note="evaluation"),
        Sample((Arg((3, 4), dtype, "transposed"), None, Arg((4,), dtype), None, None, True, 1e-5)),
    ]


def _batch_norm_errors() -> list[ErrorCase]:
    x = Arg((2, 3), "float32")
    return [
        ErrorCase((x, None, None, Arg((4,), "float32"), Arg((3,), "float32"), True, 1e-5), RuntimeError,
                  "running_mean should contain 3 elements not 4"),
        ErrorCase((x, None, None, None, None, False, 1e-5), RuntimeError,
                  "running_mean and running_var must be defined in evaluation mode"),
    ]


def _batch_norm_backward_samples(dtype: str) -> list[Sample]:
    stat = _stat(dtype)
    return [
        Sample((Arg((4, 3, 5), dtype), Arg((4, 3, 5), dtype), Arg((3,), stat), Arg((3,), stat, low=0.5, high=2),
                Arg((3,), dtype), training, 1e-5)) for training in (True, False)
    ] + [Sample((Arg((6, 2), dtype), Arg((6, 2), dtype), Arg((2,), stat), Arg((2,), stat, low=0.5, high=2), None,
                 True, 1e-5))]


def _batch_norm_backward_ref(g, x, mean, var, weight, training, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    invstd = (1 / np.sqrt(var + eps)).reshape(shape)
    xhat = (x - mean.reshape(shape)) * invstd
    scale = invstd * weight.reshape(shape) if weight is not None else invstd
    if training:
        gx = scale * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True))
    else:
        gx = g * scale
    return gx, (g * xhat).sum(axis=axes), g.sum(axis=axes)


# -- group norm, RMS norm -----------------------------------------------------------------------------

def _group_norm_ref(x, num_groups, weight=None, bias=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, num_groups, -1)
    mean, var = g.mean(-1, keepdims=True), g.var(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = ((g - mean) * rstd).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    y = y * weight.reshape(shape) if weight is not None else y
    y = y + bias.reshape(shape) if bias is not None else y
    return y, mean.reshape(n, num_groups), rstd.reshape(n, num_groups)


def _group_norm_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 4, 3), dtype), 2, Arg((4,), dtype), Arg((4,), dtype), 1e-5)),
        Sample((Arg((3, 6), dtype), 3, None, None, 1e-5)),
        Sample((Arg((2, 2, 2, 3), dtype), 1, None, Arg((2,), dtype), 1e-3)),
    ]


def _rms_norm_ref(x, normalized_shape, weight=None, eps=None):
    if eps is None:
        eps = float(np.finfo(np.float32).eps)  # every sample below passes eps or is float32
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y * weight if weight is not None else y


def _rms_norm_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg((3, 5), dtype), (5,), Arg((5,), dtype), 1e-6)),
           Sample((Arg((2, 3, 4), dtype, "transposed"), (3, 4), None, 1e-5))]
    if dtype == "float32":
        out.append(Sample((Arg((4, 3), dtype), (3,), None, None), note="eps=None"))
    return out


# -- embedding -----------------------------------------------------------------------------------------

def _ints(values, dtype: str = "int64") -> Arg:
    return Arg(np.asarray(values).shape, dtype, values=values)


def _embedding_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((5, 3), dtype), _ints([[0, 4, 4], [2, 1, 0]]))),
        Sample((Arg((4, 2), dtype, "transposed"), _ints([3, 0], "int32"), 1, True)),
        Sample((Arg((3, 4), dtype), Arg((0,), "int64"))),
        Sample((Arg((3, 4), dtype), _ints(2))),
    ]


def _embedding_ref(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    return np.asarray(weight)[np.asarray(indices, dtype=np.int64)]


def _embedding_errors() -> list[ErrorCase]:
    w = Arg((3, 2), "float32")
    return [
        ErrorCase((w, _ints([0, 3])), IndexError, "index out of range in self", data_dependent=True),
        ErrorCase((w, _ints([-1])), IndexError, "index out of range in self", data_dependent=True),
        ErrorCase((w, Arg((2,), "float32")), RuntimeError,
                  "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"),
        ErrorCase((Arg((3,), "float32"), _ints([0])), RuntimeError, "'weight' must be 2-D"),
    ]


def _embedding_backward_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 4), dtype), _ints([[0, 4, 4], [2, 4, 0]]), 5, -1, False)),
        Sample((Arg((2, 3, 4), dtype), _ints([[0, 4, 4], [2, 4, 0]]), 6, 4, False), note="padding row"),
        Sample((Arg((4, 2), dtype, "transposed"), _ints([1, 1, 3, 0], "int32"), 4, -1, True), note="by frequency"),
        Sample((Arg((0, 3), dtype), Arg((0,), "int64"), 2, -1, False)),
    ]


def _embedding_backward_ref(grad, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False):
    flat = np.asarray(indices, dtype=np.int64).reshape(-1)
    rows = np.asarray(grad).reshape(-1, grad.shape[-1])
    counts = np.bincount(flat, minlength=num_weights)
    out = np.zeros((num_weights, grad.shape[-1]), dtype=rows.dtype)
    for k, r in enumerate(flat):
        if r != padding_idx:
            out[r] += rows[k] / (counts[r] if scale_grad_by_freq else 1)
    return out


def _embedding_backward_errors() -> list[ErrorCase]:
    return [
        ErrorCase((Arg((2, 3), "float32"), _ints([0, 5]), 5, -1, False), IndexError, "index out of range in self",
                  data_dependent=True),
        ErrorCase((Arg((2, 3), "float32"), _ints([0, 1, 2]), 5, -1, False), RuntimeError,
                  "embedding_backward: grad of shape [2, 3] does not match indices of shape [3]"),
    ]


def norm_cases() -> list[OpCase]:
    """Cases for nn_layer_norm, nn_batch_norm, nn_group_norm, nn_rms_norm and their backward ops."""
    three = lambda s: (s.args[0].dtype, _stat(s.args[0].dtype), _stat(s.args[0].dtype))  # noqa: E731

    def grads(weight_position: int):
        def dtypes(s: Sample) -> tuple:
            d, w = s.args[1].dtype, s.args[weight_position]
            param = w.dtype if w is not None else _stat(d)
            return d, param, param
        return dtypes

    return [
        OpCase("nn_layer_norm", _FLOATS, _layer_norm_samples, _layer_norm_ref, three, errors=_layer_norm_errors,
               tolerances=_LOOSE),
        OpCase("nn_layer_norm_backward", _FLOATS, _layer_norm_backward_samples, _layer_norm_backward_ref, grads(5),
               tolerances=_LOOSE),
        OpCase("nn_batch_norm", _FLOATS, _batch_norm_samples, _batch_norm_ref, three, errors=_batch_norm_errors,
               tolerances=_LOOSE),
        OpCase("nn_batch_norm_backward", _FLOATS, _batch_norm_backward_samples, _batch_norm_backward_ref, grads(4),
               tolerances=_LOOSE),
        OpCase("nn_group_norm", _FLOATS, _group_norm_samples, _group_norm_ref, three, tolerances=_LOOSE),
        OpCase("nn_rms_norm", _FLOATS, _rms_norm_samples, _rms_norm_ref, lambda s: s.args[0].dtype,
               tolerances=_LOOSE),
    ]


def embedding_cases() -> list[OpCase]:
    """Cases for nn_embedding and nn_embedding_backward."""
    dtypes = ("bool", "int32", "int64") + _FLOATS + ("complex64",)
    return [
        OpCase("nn_embedding", dtypes, _embedding_samples, _embedding_ref, lambda s: s.args[0].dtype,
               errors=_embedding_errors, upcast=False),
        OpCase("nn_embedding_backward", _FLOATS, _embedding_backward_samples, _embedding_backward_ref,
               lambda s: s.args[0].dtype, errors=_embedding_backward_errors, tolerances=_LOOSE),
    ]


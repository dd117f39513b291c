"""Declarations of flambeau-nn's normalization ops.

``nn_layer_norm``, ``nn_batch_norm`` and ``nn_group_norm`` return the output with the statistics
their backward pass reuses (as PyTorch's ``native_*_norm``); ``nn_layer_norm_backward`` and
``nn_batch_norm_backward`` are the fused backward passes a backend may implement (the formulas call
them when no graph of the gradient is wanted). ``nn_rms_norm`` returns the output only. Each has a
composite (``_norm_math``), so every backend runs them.
"""
from __future__ import annotations

from typing import Any, Sequence

from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape, type_name

from . import _norm_math as M


def _check_float(op: str, input: Tensor) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{type_name(input.dtype)}\'')


def _same_device(op: str, input: Tensor, *others: Tensor | None) -> None:
    for t in others:
        if t is not None and t.device != input.device:
            raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found at least two "
                               f"devices, {input.device} and {t.device}!")


def check_normalized_shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    try:
        return tuple(int(s) for s in normalized_shape)
    except TypeError:
        raise TypeError("layer_norm(): argument 'normalized_shape' must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}") from None


def _layer_norm_checks(op: str, input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                       bias: Tensor | None) -> tuple[int, ...]:
    shape = check_normalized_shape(normalized_shape)
    _check_float(op, input)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{fmt_shape(t.shape)} and normalized_shape = {fmt_shape(shape)}")
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={fmt_shape(shape)}, expected input with shape "
                           f"[*{''.join(', ' + str(s) for s in shape)}], but got input of size{fmt_shape(input.shape)}")
    _same_device(op, input, weight, bias)
    return shape


def _stat_shape(input: Tensor, k: int) -> tuple[int, ...]:
    return tuple(input.shape[:input.dim() - k]) + (1,) * k


def _layer_norm_meta(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = _layer_norm_checks("layer_norm", input, normalized_shape, weight, bias)
    stats = (_stat_shape(input, len(shape)), M.stat_dtype(input.dtype))
    return [(tuple(input.shape), input.dtype), stats, stats]


def _layer_norm_backward_meta(grad_out, input, mean, rstd, normalized_shape, weight=None):
    shape = _layer_norm_checks("layer_norm_backward", input, normalized_shape, weight, None)
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"layer_norm_backward: grad_out of size {fmt_shape(grad_out.shape)} does not match "
                           f"input of size {fmt_shape(input.shape)}")
    for name, t in (("mean", mean), ("rstd", rstd)):
        if tuple(t.shape) != _stat_shape(input, len(shape)):
            raise RuntimeError(f"layer_norm_backward: {name} has size {fmt_shape(t.shape)}, expected "
                               f"{fmt_shape(_stat_shape(input, len(shape)))}")
    param = (shape, M.stat_dtype(input.dtype) if weight is None else weight.dtype)
    return [(tuple(input.shape), input.dtype), param, param]


def _channels(op: str, input: Tensor) -> int:
    if input.dim() < 2:
        raise ValueError(f"{op}: expected an input of at least 2 dims (N, C, *), got {input.dim()}")
    return input.shape[1]


def _batch_norm_meta(input, weight, bias, running_mean, running_var, training, eps):
    _check_float("batch_norm", input)
    c = _channels("batch_norm", input)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in evaluation mode")
    _same_device("batch_norm", input, weight, bias, running_mean, running_var)
    stats = ((c,), M.stat_dtype(input.dtype))
    return [(tuple(input.shape), input.dtype), stats, stats]


def _batch_norm_backward_meta(grad_out, input, mean, var, weight, training, eps):
    _check_float("batch_norm_backward", input)
    c = _channels("batch_norm_backward", input)
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"batch_norm_backward: grad_out of size {fmt_shape(grad_out.shape)} does not match "
                           f"input of size {fmt_shape(input.shape)}")
    for name, t in (("mean", mean), ("var", var), ("weight", weight)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm_backward: {name} should have shape [{c}], got {fmt_shape(t.shape)}")
    param = ((c,), M.stat_dtype(input.dtype) if weight is None else weight.dtype)
    return [(tuple(input.shape), input.dtype), param, param]


def _group_norm_meta(input, num_groups, weight=None, bias=None, eps=1e-5):
    _check_float("group_norm", input)
    c = _channels("group_norm", input)
    if not isinstance(num_groups, int) or num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {fmt_shape(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {fmt_shape(t.shape)} and input of shape "
                               f"{fmt_shape(input.shape)}")
    _same_device("group_norm", input, weight, bias)
    stats = ((input.shape[0], num_groups), M.stat_dtype(input.dtype))
    return [(tuple(input.shape), input.dtype), stats, stats]


def _rms_norm_meta(input, normalized_shape, weight=None, eps=None):
    shape = check_normalized_shape(normalized_shape)
    _check_float("rms_norm", input)
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={fmt_shape(shape)}, expected input with shape "
                           f"[*{''.join(', ' + str(s) for s in shape)}], but got input of size{fmt_shape(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{fmt_shape(weight.shape)} and normalized_shape = {fmt_shape(shape)}")
    _same_device("rms_norm", input, weight)
    return tuple(input.shape), input.dtype


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    stats = ("output", "mean", "rstd")
    grads = ("grad_input", "grad_weight", "grad_bias")
    return [
        OpDecl("nn_layer_norm", "(input: Tensor, normalized_shape, weight: Tensor? = None, bias: Tensor? = None, "
               "eps=1e-05)", _layer_norm_meta, composite=M.layer_norm, output_names=stats,
               doc="Layer normalization over the trailing ``normalized_shape`` dims: ``(output, mean, rstd)``.",
               **common),
        OpDecl("nn_layer_norm_backward", "(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, "
               "normalized_shape, weight: Tensor? = None)", _layer_norm_backward_meta,
               composite=M.layer_norm_backward, output_names=grads, differentiable=False,
               doc="The gradients of ``nn_layer_norm``'s input, weight and bias.", **common),
        OpDecl("nn_batch_norm", "(input: Tensor, weight: Tensor?, bias: Tensor?, running_mean: Tensor?, "
               "running_var: Tensor?, training, eps)", _batch_norm_meta, composite=M.batch_norm,
               output_names=("output", "mean", "var"),
               doc="Batch normalization over dims (0, 2, ...): ``(output, mean, var)``, the batch's statistics "
                   "(biased variance) in training, else the running ones. Running stats are not updated here.",
               **common),
        OpDecl("nn_batch_norm_backward", "(grad_out: Tensor, input: Tensor, mean: Tensor, var: Tensor, "
               "weight: Tensor?, training, eps)", _batch_norm_backward_meta, composite=M.batch_norm_backward,
               output_names=grads, differentiable=False,
               doc="The gradients of ``nn_batch_norm``'s input, weight and bias.", **common),
        OpDecl("nn_group_norm", "(input: Tensor, num_groups, weight: Tensor? = None, bias: Tensor? = None, eps=1e-05)",
               _group_norm_meta, composite=M.group_norm, output_names=stats,
               doc="Group normalization: ``(output, mean, rstd)`` with statistics of shape (N, num_groups).",
               **common),
        OpDecl("nn_rms_norm", "(input: Tensor, normalized_shape, weight: Tensor? = None, eps=None)", _rms_norm_meta,
               composite=M.rms_norm, doc="Root-mean-square normalization over the trailing dims.", **common),
    ]

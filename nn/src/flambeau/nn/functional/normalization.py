"""Functional forms: normalization (torch.nn.functional's batch_norm, layer_norm, group_norm, ...)."""
from __future__ import annotations

from typing import Sequence

import flambeau as fb
from flambeau import Tensor

from .._ops.normalization import check_normalized_shape

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm", "normalize"]

_layer_norm = fb.ops.function("nn_layer_norm")
_batch_norm = fb.ops.function("nn_batch_norm")
_group_norm = fb.ops.function("nn_group_norm")
_rms_norm = fb.ops.function("nn_rms_norm")


def _values_per_channel(input: Tensor) -> int:
    count = input.shape[0]
    for s in input.shape[2:]:
        count *= s
    return count


def _update_running(running: Tensor, batch_value: Tensor, momentum: float) -> None:
    """``running = (1 - momentum) * running + momentum * batch_value``, in place and untracked."""
    with fb.no_grad():
        new = running.to(batch_value.dtype) * (1.0 - momentum) + batch_value * momentum
        running.copy_(new)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    r"""Batch Normalization for each channel across a batch of data.

    In training, normalizes with the batch's statistics over every dim but the channel dim (1) and,
    when given, updates ``running_mean`` and ``running_var`` in place:
    ``running = (1 - momentum) * running + momentum * batch_statistic``, the variance unbiased.
    In evaluation, normalizes with ``running_mean`` and ``running_var``.

    See :class:`~flambeau.nn.BatchNorm1d` for details.
    """
    if training and input.dim() >= 2 and _values_per_channel(input) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    output, mean, var = _batch_norm(input, weight, bias, running_mean, running_var, training, eps)
    if training and running_mean is not None:
        _update_running(running_mean, mean, momentum)
    if training and running_var is not None:
        n = _values_per_channel(input)
        _update_running(running_var, var * (n / (n - 1)), momentum)
    return output


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    r"""Instance Normalization: each channel of each sample normalized over its own spatial dims.

    See :class:`~flambeau.nn.InstanceNorm1d` for details.
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    n, c = input.shape[0], input.shape[1]
    # Batch norm over a batch of one sample whose channels are the (sample, channel) pairs.
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))

    def repeat(t: Tensor | None) -> Tensor | None:
        return t.repeat(n) if t is not None else None

    rm, rv = repeat(running_mean), repeat(running_var)
    out = batch_norm(folded, rm, rv, repeat(weight), repeat(bias), use_input_stats, momentum, eps)
    if use_input_stats:
        with fb.no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.reshape(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(input.shape)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    r"""Layer Normalization over the last ``len(normalized_shape)`` dims.

    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, the variance biased.

    See :class:`~flambeau.nn.LayerNorm` for details.
    """
    return _layer_norm(input, check_normalized_shape(normalized_shape), weight, bias, eps)[0]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    r"""Group Normalization: the channels split into ``num_groups`` groups, each normalized per sample.

    See :class:`~flambeau.nn.GroupNorm` for details.
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    return _group_norm(input, num_groups, weight, bias, eps)[0]


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    r"""Root Mean Square Layer Normalization: ``y = x / sqrt(mean(x^2) + eps) * weight``.

    ``eps=None`` uses ``flambeau.finfo(input.dtype).eps``. See :class:`~flambeau.nn.RMSNorm`.
    """
    return _rms_norm(input, check_normalized_shape(normalized_shape), weight, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    r"""Local response normalization across channels (dim 1).

    ``b_c = a_c / (k + alpha / size * sum_{c'} a_{c'}^2) ^ beta``, the sum over the ``size``
    channels around ``c`` (zero-padded at the edges, always divided by ``size``).
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    zeros = tuple(input.shape[:1])
    rest = tuple(input.shape[2:])
    padded = fb.cat([fb.zeros(zeros + (before,) + rest, dtype=sq.dtype, device=sq.device), sq,
                     fb.zeros(zeros + (after,) + rest, dtype=sq.dtype, device=sq.device)], 1)
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    div = (window * (alpha / size) + k).pow(beta)
    return input / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    r"""``input / max(||input||_p, eps)`` along ``dim``."""
    denom = fb.linalg.vector_norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return fb.div(input, denom, out=out)

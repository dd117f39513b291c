"""The normalization ops' maths written with flambeau ops: their composites and backward passes.

Every backend runs these (the composite path), autograd differentiates them (double backward of
the fused kernels' formulas), and the CPU kernels must agree with them. float16 and bfloat16 inputs
compute in float32, as PyTorch's kernels accumulate, and the output is cast back.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import flambeau as fb
from flambeau import Tensor

_HALF = (fb.float16, fb.bfloat16)


def stat_dtype(dtype: Any) -> Any:
    """The dtype statistics (mean, rstd) are kept in: float32 for half inputs."""
    return fb.float32 if dtype in _HALF else dtype


def _wide(t: Tensor | None) -> Tensor | None:
    return t.to(fb.float32) if t is not None and t.dtype in _HALF else t


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = y * _wide(weight)
    if bias is not None:
        y = y + _wide(bias)
    return y


# -- layer norm ------------------------------------------------------------------------------------

def norm_dims(input: Tensor, count: int) -> tuple[int, ...]:
    return tuple(range(input.dim() - count, input.dim()))


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, mean, rstd)``; mean and rstd keep the normalized dims as size 1."""
    x = _wide(input)
    dims = norm_dims(input, len(normalized_shape))
    if not dims:  # normalized_shape=(): each element is its own group (PyTorch gives 0 / bias)
        mean = x
        var = x * 0
    else:
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
    rstd = (var + eps).rsqrt()
    y = _affine((x - mean) * rstd, weight, bias)
    return y.to(input.dtype), mean, rstd


def layer_norm_backward(grad: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, normalized_shape: Sequence[int],
                        weight: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """Gradients of layer norm's input, weight and bias (the latter two of ``normalized_shape``)."""
    x, g = _wide(input), _wide(grad)
    dims = norm_dims(input, len(normalized_shape))
    lead = tuple(range(input.dim() - len(normalized_shape)))
    xhat = (x - mean) * rstd
    gw = (g * xhat).sum(lead) if lead else g * xhat
    gb = g.sum(lead) if lead else g
    gh = g * _wide(weight) if weight is not None else g
    if dims:
        gx = rstd * (gh - gh.mean(dims, keepdim=True) - xhat * (gh * xhat).mean(dims, keepdim=True))
    else:
        gx = gh * 0
    wdt = weight.dtype if weight is not None else gw.dtype  # half-precision weights: float32 maths, stored back
    return gx.to(input.dtype), gw.to(wdt), gb.to(wdt)


# -- batch norm ------------------------------------------------------------------------------------

def channel_shape(input: Tensor) -> tuple[int, ...]:
    """The shape a per-channel vector broadcasts to against ``input`` (N, C, *)."""
    return (1, input.shape[1]) + (1,) * (input.dim() - 2)


def reduce_dims(input: Tensor) -> tuple[int, ...]:
    return (0,) + tuple(range(2, input.dim()))


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, mean, var)``: the batch statistics (biased variance) in training, else the running ones."""
    x = _wide(input)
    shape = channel_shape(input)
    if training:
        dims = reduce_dims(input)
        mean = x.mean(dims)
        var = (x - mean.reshape(shape)).square().mean(dims)
    else:
        mean = _wide(running_mean).clone()  # copies: the caller may update the running tensors later
        var = _wide(running_var).clone()
    invstd = (var + eps).rsqrt()
    y = (x - mean.reshape(shape)) * invstd.reshape(shape)
    w = _wide(weight).reshape(shape) if weight is not None else None
    b = _wide(bias).reshape(shape) if bias is not None else None
    return _affine(y, w, b).to(input.dtype), mean, var


def batch_norm_backward(grad: Tensor, input: Tensor, mean: Tensor, var: Tensor, weight: Tensor | None,
                        training: bool, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    x, g = _wide(input), _wide(grad)
    shape = channel_shape(input)
    dims = reduce_dims(input)
    invstd = (var + eps).rsqrt().reshape(shape)
    xhat = (x - mean.reshape(shape)) * invstd
    gw = (g * xhat).sum(dims)
    gb = g.sum(dims)
    scale = invstd * _wide(weight).reshape(shape) if weight is not None else invstd
    if training:
        gx = scale * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))
    else:
        gx = g * scale
    wdt = weight.dtype if weight is not None else gw.dtype  # half-precision weights: float32 maths, stored back
    return gx.to(input.dtype), gw.to(wdt), gb.to(wdt)


# -- group norm and RMS norm -----------------------------------------------------------------------

def group_norm(input: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
               eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, mean, rstd)``, the statistics of shape ``(N, num_groups)``."""
    n, c = input.shape[0], input.shape[1]
    x = _wide(input).reshape(n, num_groups, -1)
    if x.shape[2] == 0:
        mean = x.sum(2, keepdim=True)
        var = mean
    else:
        mean = x.mean(2, keepdim=True)
        var = (x - mean).square().mean(2, keepdim=True)
    rstd = (var + eps).rsqrt()
    y = ((x - mean) * rstd).reshape(input.shape)
    shape = (1, c) + (1,) * (input.dim() - 2)
    w = _wide(weight).reshape(shape) if weight is not None else None
    b = _wide(bias).reshape(shape) if bias is not None else None
    return _affine(y, w, b).to(input.dtype), mean.reshape(n, num_groups), rstd.reshape(n, num_groups)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None, eps: float | None) -> Tensor:
    x = _wide(input)
    if eps is None:
        eps = fb.finfo(input.dtype).eps
    dims = norm_dims(input, len(normalized_shape))
    ms = x.square().mean(dims, keepdim=True) if dims else x.square()
    y = x * (ms + eps).rsqrt()
    if weight is not None:
        y = y * _wide(weight)
    return y.to(input.dtype)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)

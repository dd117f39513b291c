"""Folding an evaluation-mode batch norm into the convolution or linear layer before it.

In evaluation a batch norm is the affine map ``y = (x - mean) * w / sqrt(var + eps) + b`` per
channel, so ``bn(conv(x))`` is one convolution with each output channel's filter scaled by
``w / sqrt(var + eps)`` and its bias moved accordingly (likewise for a linear layer's rows).
"""
from __future__ import annotations

import copy
from typing import Any, TypeVar

import flambeau as fb
from flambeau import Tensor

from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]

M = TypeVar("M")


def _check_eval(layer: Any, bn: Any) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("batch norm to fuse must track running statistics")


def fuse_conv_bn_eval(conv: M, bn: Any, transpose: bool = False) -> M:
    r"""A copy of ``conv`` whose output equals ``bn(conv(x))`` in evaluation mode.

    Args:
        conv: a convolution module in eval mode.
        bn: the batch norm that follows it, in eval mode, with running statistics.
        transpose: ``conv`` is a transposed convolution (its output channels are weight dim 1).
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(  # type: ignore[attr-defined]
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,  # type: ignore
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False) -> tuple:
    r"""The weight and bias (as Parameters) of the convolution that applies ``conv`` then the batch norm.

    Missing pieces default as the layers do: no conv bias is zero, no batch norm weight/bias is 1/0.
    The results keep the conv's dtypes and ``requires_grad``.
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    b_grad = conv_b.requires_grad if conv_b is not None else False
    with fb.no_grad():
        conv_b = fb.zeros_like(bn_rm) if conv_b is None else conv_b
        bn_w = fb.ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = fb.zeros_like(bn_rm) if bn_b is None else bn_b
        rstd = (bn_rv + bn_eps).rsqrt()
        # one factor per output channel: dim 0 of a convolution's weight, dim 1 of a transposed one's
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
        w = (conv_w * (bn_w * rstd).reshape(shape)).to(w_dtype)
        b = ((conv_b - bn_rm) * rstd * bn_w + bn_b).to(b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, b_grad)


def fuse_linear_bn_eval(linear: M, bn: Any) -> M:
    r"""A copy of ``linear`` whose output equals ``bn(linear(x))`` in evaluation mode (a BatchNorm1d over
    the features, with ``num_features`` equal to ``out_features`` or 1)."""
    _check_eval(linear, bn)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):  # type: ignore[attr-defined]
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(  # type: ignore[attr-defined]
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)  # type: ignore
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor | None, bn_b: Tensor | None) -> tuple:
    r"""The weight and bias (as Parameters) of the linear layer that applies ``linear`` then the batch norm."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    b_grad = linear_b.requires_grad if linear_b is not None else False
    with fb.no_grad():
        linear_b = fb.zeros_like(bn_rm) if linear_b is None else linear_b
        bn_w = fb.ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = fb.zeros_like(bn_rm) if bn_b is None else bn_b
        scale = bn_w * (bn_rv + bn_eps).rsqrt()
        w = (linear_w * scale.unsqueeze(-1).to(w_dtype))
        b = ((linear_b - bn_rm) * scale + bn_b).to(b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, b_grad)

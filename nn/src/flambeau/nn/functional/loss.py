"""Functional forms: the losses (torch.nn.functional's names, arguments and defaults).

``nll_loss`` and ``cross_entropy`` over class indices run the fused ops ``nn_nll_loss`` and
``nn_cross_entropy`` (declared in ``flambeau.nn._ops.loss``); every other loss is written here with
flambeau ops, so that autograd differentiates it any number of times. Each takes ``reduction``
(``'none'``, ``'mean'`` or ``'sum'``); where PyTorch still accepts the deprecated ``size_average``
and ``reduce``, so do these, with its warning.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import flambeau
from flambeau import Tensor

import flambeau.nn._reduction as _reduction
from .._lazy import LazyOp
from .._ops.loss import check_reduction
from ._ctc import ctc_loss
from .softmax import log_softmax

__all__ = [
    "l1_loss", "mse_loss", "cross_entropy", "nll_loss", "poisson_nll_loss", "gaussian_nll_loss", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "margin_ranking_loss", "hinge_embedding_loss",
    "multilabel_margin_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "cosine_embedding_loss", "multi_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "ctc_loss",
]

_nn_nll_loss = LazyOp("nn_nll_loss")
_nn_cross_entropy = LazyOp("nn_cross_entropy")


def _size_warning(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3)


def _pointwise(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """``input`` and ``target`` broadcast against each other, with PyTorch's warning when their sizes differ."""
    _size_warning(input, target)
    try:
        shape = flambeau.broadcast_shapes(input.shape, target.shape)
    except RuntimeError as exc:
        raise RuntimeError(f"{name}: The size of input ({list(input.shape)}) must match the size of target "
                           f"({list(target.shape)}): {exc}") from None
    return input.expand(shape), target.expand(shape)


def _check_weight_not_differentiable(name: str, weight: Tensor | None) -> None:
    """PyTorch's refusal of a class/element ``weight`` that requires grad where it has no derivative."""
    if weight is not None and weight.requires_grad and flambeau.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")


# -- regression losses ------------------------------------------------------------------------------

def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    r"""The mean absolute error :math:`|x_n - y_n|`, reduced as ``reduction`` says.

    Args:
        input (Tensor): predictions, any shape.
        target (Tensor): targets, the same shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        weight (Tensor, optional): multiplies each element's loss (broadcast to ``input``).
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    x, y = _pointwise("l1_loss", input, target)
    loss = (x - y).abs()
    return _reduction.apply(loss if weight is None else loss * weight, reduction)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    r"""The mean squared error :math:`(x_n - y_n)^2`, reduced as ``reduction`` says.

    Args:
        input (Tensor): predictions, any shape.
        target (Tensor): targets, the same shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        weight (Tensor, optional): multiplies each element's loss (broadcast to ``input``).
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    x, y = _pointwise("mse_loss", input, target)
    loss = (x - y).square()
    return _reduction.apply(loss if weight is None else loss * weight, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    r"""Huber loss: :math:`0.5 z^2` for :math:`z = |x - y| < \delta`, else :math:`\delta (z - 0.5 \delta)`.

    Args:
        input (Tensor): predictions.
        target (Tensor): targets, the same shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        delta (float): where the loss turns from quadratic to linear; must be positive. Default: 1.0.
        weight (Tensor, optional): multiplies each element's loss.
    """
    check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, y = _pointwise("huber_loss", input, target)
    z = (x - y).abs()
    loss = flambeau.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduction.apply(loss if weight is None else loss * weight, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    r"""Smooth L1 loss: :math:`0.5 z^2 / \beta` for :math:`z = |x - y| < \beta`, else :math:`z - 0.5 \beta`.

    Args:
        input (Tensor): predictions.
        target (Tensor): targets, the same shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        beta (float): where the loss turns from quadratic to linear; 0 gives the L1 loss. Default: 1.0.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y = _pointwise("smooth_l1_loss", input, target)
    z = (x - y).abs()
    if beta == 0.0:
        return _reduction.apply(z, reduction)
    loss = flambeau.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return _reduction.apply(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    r"""Negative log-likelihood of a Poisson distribution with rate ``input`` (``exp(input)`` if ``log_input``).

    Args:
        input (Tensor): the expected counts (their logarithms when ``log_input``).
        target (Tensor): the observed counts.
        log_input (bool): the loss is ``exp(input) - target * input`` if True, else
            ``input - target * log(input + eps)``. Default: True.
        full (bool): add the Stirling approximation of ``log(target!)`` (for targets above 1). Default: False.
        eps (float): keeps ``log`` finite when ``log_input`` is False. Default: 1e-8.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduction.apply(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    r"""Negative log-likelihood of a Gaussian with mean ``input`` and variance ``var``:
    :math:`0.5 (\log \max(var, eps) + (input - target)^2 / \max(var, eps))` (+ :math:`0.5 \log 2\pi` if ``full``).

    Args:
        input (Tensor): the means, ``(N, *)`` or ``(*)``.
        target (Tensor): the samples, the shape of ``input`` (or broadcastable to it).
        var (Tensor or float): the variances: the shape of ``input``, or with its last dim 1 or
            missing (one variance shared by the last dim), or a number. Must be non-negative.
        full (bool): include the constant term. Default: False.
        eps (float): the smallest variance used (the clamp passes gradients through). Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    if not isinstance(var, Tensor):
        var = flambeau.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass  # heteroscedastic, one variance per sample
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    with flambeau.no_grad():
        if bool((var < 0).any()):
            raise ValueError("var has negative entry/entries")
    # clamped for stability; the clamp is not differentiated (the gradient passes through as is)
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduction.apply(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    r"""The Kullback-Leibler divergence :math:`y (\log y - x)` of ``target`` y from ``input`` x (log-probabilities).

    Args:
        input (Tensor): log-probabilities.
        target (Tensor): probabilities (log-probabilities if ``log_target``).
        reduction (str): ``'none'`` | ``'batchmean'`` (the sum over the batch size, the KL
            divergence's definition) | ``'sum'`` | ``'mean'`` (over every element). Default: ``'mean'``.
        log_target (bool): ``target`` holds log-probabilities. Default: False.
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = flambeau.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduction.apply(loss, reduction)


# -- classification losses --------------------------------------------------------------------------

def _class_rows(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Callable[[Tensor], Tensor]]:
    """``(N, C)`` rows and ``(N,)`` targets for the fused ops, and how to give a ``'none'`` result its shape."""
    ndim = input.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim == 1:
        if target.dim() != 0:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
        return input.unsqueeze(0), target.unsqueeze(0), lambda loss: loss.squeeze(0)
    if target.dim() == 0 or input.shape[0] != target.shape[0]:
        got = target.shape[0] if target.dim() else 0
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({got}).")
    if ndim == 2:
        return input, target, lambda loss: loss
    if tuple(input.shape[2:]) != tuple(target.shape[1:]):
        expected = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    c = input.shape[1]
    shape = target.shape
    return input.movedim(1, -1).reshape(-1, c), target.reshape(-1), lambda loss: loss.reshape(shape)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""The negative log-likelihood loss: :math:`-w_{y_n} x_{n, y_n}` for log-probabilities ``input``.

    Args:
        input (Tensor): log-probabilities, ``(C)``, ``(N, C)`` or ``(N, C, d1, d2, ..., dK)``.
        target (Tensor): class indices in ``[0, C)`` (int64), ``()``, ``(N)`` or ``(N, d1, ..., dK)``.
        weight (Tensor, optional): a weight for each class, of size C.
        ignore_index (int): targets of this value add nothing, neither to the loss nor to the
            mean's denominator. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` (over the summed weights of the kept targets) |
            ``'sum'``. Default: ``'mean'``.

    Example::

        >>> logp = F.log_softmax(flambeau.randn(3, 5, requires_grad=True), dim=1)
        >>> F.nll_loss(logp, flambeau.tensor([1, 0, 4])).backward()
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    x, t, shape_back = _class_rows(input, target)
    loss = _nn_nll_loss(x, t, weight, reduction, ignore_index)
    return shape_back(loss) if reduction == "none" else loss


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    r"""The cross-entropy between the softmax of the logits ``input`` and ``target``.

    Args:
        input (Tensor): unnormalised logits, ``(C)``, ``(N, C)`` or ``(N, C, d1, ..., dK)``.
        target (Tensor): class indices (int64) in ``[0, C)`` of shape ``()``, ``(N)`` or
            ``(N, d1, ..., dK)``; or class probabilities (floating point) of ``input``'s shape.
        weight (Tensor, optional): a weight for each class, of size C.
        ignore_index (int): class-index targets of this value add nothing, neither to the loss nor
            to the mean's denominator. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): in [0, 1]: the target becomes a mix of the given one and the
            uniform distribution, ``(1 - label_smoothing) * target + label_smoothing / C``. Default: 0.0.

    Example::

        >>> logits = flambeau.randn(3, 5, requires_grad=True)
        >>> F.cross_entropy(logits, flambeau.tensor([1, 0, 4])).backward()
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dim() >= 1 and tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    x, t, shape_back = _class_rows(input, target)
    loss = _nn_cross_entropy(x, t, weight, reduction, ignore_index, float(label_smoothing))
    return shape_back(loss) if reduction == "none" else loss


def _cross_entropy_probabilities(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                                 reduction: str, label_smoothing: float) -> Tensor:
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.dim() == 1 else 1
    c = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    terms = logp * target
    if weight is not None:
        terms = terms * weight.reshape([c] + [1] * (input.dim() - class_dim - 1))
    loss = -terms.sum(class_dim)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (input.numel() // c if c else 0)


def _type_name(d: Any) -> str:
    from flambeau.ops.meta import type_name

    return type_name(d)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    r"""Binary cross-entropy between probabilities ``input`` and ``target``:
    :math:`-w (y \log x + (1 - y) \log(1 - x))`, each log clamped at -100 as PyTorch.

    Args:
        input (Tensor): probabilities in [0, 1], any shape.
        target (Tensor): targets in [0, 1], the same shape.
        weight (Tensor, optional): multiplies each element's loss (broadcast to ``input``).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_weight_not_differentiable("binary_cross_entropy", weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    with flambeau.no_grad():
        if input.numel() and bool(((input < 0).logical_or(input > 1)).any()):
            raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduction.apply(loss, reduction)


def _softplus_neg(x: Tensor) -> Tensor:
    """``log(1 + exp(-x))`` without overflow: ``max(-x, 0) + log1p(exp(-|x|))``."""
    return (-x).clamp(min=0) + (-x.abs()).exp().log1p()


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    r"""Binary cross-entropy of ``sigmoid(input)`` against ``target``, computed from the logits without overflow:
    :math:`-w (p_c y \log \sigma(x) + (1 - y) \log(1 - \sigma(x)))`.

    Args:
        input (Tensor): logits, any shape.
        target (Tensor): targets in [0, 1], the same shape.
        weight (Tensor, optional): multiplies each element's loss (broadcast to ``input``).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        pos_weight (Tensor, optional): the weight of positive examples, broadcast along the last
            dim (one per class).
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_weight_not_differentiable("binary_cross_entropy_with_logits", weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    softplus = _softplus_neg(input)  # -log(sigmoid(x))
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus
    else:
        loss = (1 - target) * input + softplus
    if weight is not None:
        loss = loss * weight
    return _reduction.apply(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    r"""The two-class logistic loss :math:`\log(1 + \exp(-y x))` for targets of 1 or -1.

    Args:
        input (Tensor): any shape.
        target (Tensor): 1 or -1, the same shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    x, y = _pointwise("soft_margin_loss", input, target)
    return _reduction.apply(_softplus_neg(x * y), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    r"""One-versus-all logistic loss over C classes, averaged over the classes:
    :math:`-\frac{1}{C} \sum_i w_i (y_i \log \sigma(x_i) + (1 - y_i) \log \sigma(-x_i))`.

    Args:
        input (Tensor): ``(N, C)`` or ``(C)`` logits.
        target (Tensor): 0 or 1 for each class, the same shape.
        weight (Tensor, optional): a weight for each class (broadcast to ``input``).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    loss = target * _softplus_neg(input) + (1 - target) * _softplus_neg(-input)
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    c = input.shape[class_dim] if input.dim() else 1
    loss = loss.sum(class_dim) / c if input.dim() else loss
    return _reduction.apply(loss, reduction)


def _check_same_ndim(name: str, **tensors: Tensor) -> None:
    dims = {t.dim() for t in tensors.values()}
    if len(dims) > 1:
        sizes = ", ".join(f"{k}: {list(t.shape)}" for k, t in tensors.items())
        raise RuntimeError(f"{name} : All input tensors should have same dimension but got sizes: {sizes} ")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    r"""The ranking loss :math:`\max(0, -y (x_1 - x_2) + \text{margin})`: ``target`` 1 says ``input1``
    should rank higher, -1 lower.

    Args:
        input1 (Tensor), input2 (Tensor): ``(N)`` or ``()`` scores.
        target (Tensor): 1 or -1, the same shape.
        margin (float): Default: 0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_same_ndim("margin_ranking_loss", input1=input1, input2=input2, target=target)
    return _reduction.apply((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""The hinge embedding loss: :math:`x` where ``target`` is 1, :math:`\max(0, \text{margin} - x)` where it is -1.

    Args:
        input (Tensor): distances, any shape.
        target (Tensor): 1 or -1, the same shape.
        margin (float): Default: 1.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    zero = flambeau.zeros((), dtype=input.dtype, device=input.device)
    margin_part = flambeau.where(target != 1, (margin - input).clamp(min=0), zero)
    self_part = flambeau.where(target != -1, input, zero)
    return _reduction.apply(margin_part + self_part, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""Multi-class multi-label hinge loss: for each target class j (the leading entries of
    ``target`` before the first -1) and each non-target class i, :math:`\max(0, 1 - (x_j - x_i)) / C`.

    Args:
        input (Tensor): ``(C)`` or ``(N, C)`` scores.
        target (Tensor): int64 class indices of the same shape, padded with -1 after the last one.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if target.dtype is not flambeau.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target.dtype)}")
    squeeze = input.dim() < 2
    x = input.reshape(1, -1) if squeeze else input
    t = target.reshape(1, -1) if squeeze else target
    c = x.shape[1]
    # the targets are the entries before the first -1
    valid = (t != -1).to(flambeau.int64).cumprod(1).to(flambeau.bool)
    with flambeau.no_grad():
        if bool((valid.logical_and((t < 0).logical_or(t >= c))).any()):
            raise RuntimeError(f"multilabel_margin_loss: target values must be -1 or in [0, {c - 1}]")
    safe = t.where(valid, t.new_zeros(()))
    # counts[n, j]: how often class j is listed as a target of sample n
    counts = flambeau.zeros(x.shape, dtype=x.dtype, device=x.device).scatter_add(1, safe, valid.to(x.dtype))
    is_target = counts > 0
    # hinge[n, j, i] = max(0, 1 - (x[n, j] - x[n, i])), kept for listed j and non-target i
    hinge = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp(min=0)
    others = (~is_target).to(x.dtype).unsqueeze(1)
    loss = (hinge * others * counts.unsqueeze(2)).sum((1, 2)) / c
    if squeeze:
        loss = loss.squeeze(0)
    return _reduction.apply(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    r"""Multi-class hinge loss: :math:`\sum_{i \neq y} w_y \max(0, \text{margin} - x_y + x_i)^p / C`.

    Args:
        input (Tensor): ``(N, C)`` or ``(C)`` scores.
        target (Tensor): int64 class indices, ``(N)`` or ``()``.
        p (int): 1 or 2. Default: 1.
        margin (float): Default: 1.
        weight (Tensor, optional): a weight for each class, of size C.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_weight_not_differentiable("multi_margin_loss", weight)
    if input.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if target.dtype is not flambeau.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target.dtype)}")
    squeeze = input.dim() < 2
    x = input.reshape(1, -1) if squeeze else input
    t = target.reshape(-1)
    n, c = x.shape
    if t.shape[0] != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(target.shape)}")
    if weight is not None and weight.shape[0] != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    with flambeau.no_grad():
        if n and bool(((t < 0).logical_or(t >= c)).any()):
            raise RuntimeError("target out of range")
    picked = x.gather(1, t.unsqueeze(1))
    terms = (margin - picked + x).clamp(min=0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight[t].unsqueeze(1)
    # the target's own class does not count
    own = flambeau.zeros(x.shape, dtype=x.dtype, device=x.device).scatter(1, t.unsqueeze(1), 1.0)
    loss = (terms * (1 - own)).sum(1) / c
    if squeeze:
        loss = loss.squeeze(0)
    return _reduction.apply(loss, reduction)


_COSINE_EPS = 1e-12


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    r"""The cosine embedding loss: :math:`1 - \cos(x_1, x_2)` where ``target`` is 1,
    :math:`\max(0, \cos(x_1, x_2) - \text{margin})` where it is -1.

    Args:
        input1 (Tensor), input2 (Tensor): ``(N, D)`` or ``(D)``.
        target (Tensor): 1 or -1, ``(N)`` or ``()``.
        margin (float): in [-1, 1]. Default: 0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if target.dim() == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{target.dim()}D target tensor expects {want}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + _COSINE_EPS
    mag2 = (input2 * input2).sum(-1) + _COSINE_EPS
    cos = dot / (mag1 * mag2).sqrt()
    zero = flambeau.zeros((), dtype=cos.dtype, device=cos.device)
    pos = flambeau.where(target == 1, 1 - cos, zero)
    neg = flambeau.where(target == -1, (cos - margin).clamp(min=0), zero)
    return _reduction.apply(pos + neg, reduction)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim (``F.pairwise_distance``)."""
    return (x1 - x2 + eps).norm(p, -1)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""The triplet loss :math:`\max(0, d(a, p) - d(a, n) + \text{margin})` with :math:`d` the p-norm distance.

    Args:
        anchor (Tensor), positive (Tensor), negative (Tensor): ``(N, D)`` or ``(D)``.
        margin (float): Default: 1.
        p (float): the norm's degree. Default: 2.
        eps (float): added to the differences (``F.pairwise_distance``). Default: 1e-6.
        swap (bool): use the smaller of d(a, n) and d(p, n) (the distance swap). Default: False.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    a, pos, neg = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pos == neg):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pos}D, and negative {neg}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = flambeau.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduction.apply((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    r"""The triplet loss with any distance: :math:`\max(0, d(a, p) - d(a, n) + \text{margin})`.

    Args:
        anchor (Tensor), positive (Tensor), negative (Tensor): any shapes ``distance_function`` takes.
        distance_function (callable, optional): ``d(x1, x2) -> Tensor``; the Euclidean
            ``F.pairwise_distance`` by default.
        margin (float): non-negative. Default: 1.
        swap (bool): use the smaller of d(a, n) and d(p, n). Default: False.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    a, pos, neg = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pos == neg):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pos}D, and negative {neg}D inputs")
    distance = distance_function if distance_function is not None else _pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = flambeau.minimum(d_neg, distance(positive, negative))
    return _reduction.apply((margin + d_pos - d_neg).clamp(min=0), reduction)

"""Declarations of flambeau-nn's loss ops: the fused negative log-likelihood and cross-entropy over
class indices, and their backward ops.

The functional forms (``flambeau.nn.functional.nll_loss`` / ``cross_entropy``) bring every input
to the ops' one layout first: ``input`` of shape ``(N, C)`` and ``target`` of shape ``(N,)`` (a
``(C,)`` input gains a batch dim; a ``(N, C, d1, ...)`` input moves its class dim last and
flattens). Each op has a composite written with flambeau ops, which every backend runs; the CPU
backend registers fused kernels for them. The other losses are compositions in the functional forms.

``reduction`` is ``'none'``, ``'mean'`` or ``'sum'``; ``'mean'`` divides by the summed weights of
the targets that are not ``ignore_index`` (NaN when every target is ignored, as PyTorch).
"""
from __future__ import annotations

from typing import Any

import flambeau
from flambeau import Tensor
from flambeau.ops import OpDecl

REDUCTIONS = ("none", "mean", "sum")


def type_name(d: Any) -> str:
    from flambeau.ops.meta import type_name as name

    return name(d)


# -- argument checks (the meta functions: before any kernel or composite runs) ---------------------

def check_reduction(reduction: Any) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def check_class_targets(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: Any,
                        values: bool = True) -> int:
    """Checks a ``(N, C)`` input against ``(N,)`` class indices (their values too, unless ``values`` is
    False: the backward ops get the targets their forward op checked); returns C."""
    if input.dim() != 2:
        raise ValueError(f"Expected 2 dimensions for the input of the fused loss op (got {input.dim()})")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"nll_loss" not implemented for \'{type_name(input.dtype)}\'')
    if target.dtype is not flambeau.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")
    if target.dim() != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    n, c = input.shape
    if target.shape[0] != n:
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({target.shape[0]}).")
    if weight is not None:
        if weight.dim() != 1 or weight.shape[0] != c:
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                               f"weight tensor of shape: {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(weight.dtype)}")
    if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
        raise TypeError(f"ignore_index must be int, not {type(ignore_index).__name__}")
    if values:
        check_target_values(target, c, ignore_index)
    return c


def check_target_values(target: Tensor, c: int, ignore_index: int) -> None:
    """IndexError naming the first target outside ``[0, C)`` that is not ``ignore_index``.

    The values are read (on devices that hold data) before any kernel or composite sees them.
    """
    if target.device.type == "meta" or target.numel() == 0:
        return
    with flambeau.no_grad():
        low, high = int(target.amin()), int(target.amax())
        if 0 <= low and high < c:
            return
        bad = (target != ignore_index).logical_and((target < 0).logical_or(target >= c))
        if bool(bad.any()):
            # the first bad target by nonzero and select (core ops: no mask indexing on any backend)
            first = int(bad.reshape(-1).nonzero()[0, 0])
            raise IndexError(f"Target {int(target.reshape(-1)[first])} is out of bounds.")


def _loss_shape(input: Tensor, reduction: str) -> tuple:
    return (input.shape[0],) if reduction == "none" else ()


def _nll_meta(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, ignore_index: int) -> tuple:
    check_reduction(reduction)
    check_class_targets(input, target, weight, ignore_index)
    return _loss_shape(input, reduction), input.dtype


def _nll_backward_meta(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                       ignore_index: int) -> tuple:
    check_reduction(reduction)
    check_class_targets(input, target, weight, ignore_index, values=False)
    expected = _loss_shape(input, reduction)
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"nll_loss_backward: expected grad_output of shape {list(expected)}, "
                           f"got {list(grad_output.shape)}")
    return tuple(input.shape), input.dtype


def _check_smoothing(label_smoothing: Any) -> None:
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _ce_meta(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, ignore_index: int,
             label_smoothing: float) -> tuple:
    _check_smoothing(label_smoothing)
    return _nll_meta(input, target, weight, reduction, ignore_index)


def _ce_backward_meta(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                      ignore_index: int, label_smoothing: float) -> tuple:
    _check_smoothing(label_smoothing)
    return _nll_backward_meta(grad_output, input, target, weight, reduction, ignore_index)


# -- composites -----------------------------------------------------------------------------------

def _picked_weights(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int) -> tuple:
    """(safe target, each row's weight with ignored rows at 0)."""
    kept = target != ignore_index
    safe = target.where(kept, target.new_zeros(()))
    if weight is None:
        w = flambeau.ones((), dtype=input.dtype, device=input.device)
    else:  # weight[safe] as a gather (a core op; tensor indexing is not one)
        w = weight.gather(0, safe.reshape(-1)).reshape(safe.shape)
    return safe, w * kept.to(input.dtype)


def _reduce(losses: Tensor, w: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / w.expand(losses.shape).sum()


def nll_loss_composite(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                       ignore_index: int) -> Tensor:
    safe, w = _picked_weights(input, target, weight, ignore_index)
    picked = input.gather(1, safe.unsqueeze(1)).squeeze(1)
    return _reduce(-picked * w, w, reduction)


def nll_loss_backward_composite(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None,
                                reduction: str, ignore_index: int) -> Tensor:
    safe, w = _picked_weights(input, target, weight, ignore_index)
    w = w.expand(target.shape)
    scale = w * (grad_output / w.sum() if reduction == "mean" else grad_output)
    # ignored rows get exactly 0 (not 0 * inf when every target is ignored)
    scale = flambeau.where(target != ignore_index, scale, scale.new_zeros(()))
    return flambeau.zeros_like(input).scatter(1, safe.unsqueeze(1), -scale.unsqueeze(1))


def cross_entropy_composite(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, ignore_index: int,
                            label_smoothing: float) -> Tensor:
    logp = input.log_softmax(1)
    nll = nll_loss_composite(logp, target, weight, reduction, ignore_index)
    if label_smoothing == 0.0:
        return nll
    # PyTorch's smoothing: (1 - eps) * nll + eps / C * (the loss against the uniform distribution),
    # ignored rows zeroed, and the mean divided by the same total weight as nll's.
    c = input.shape[1]
    safe, w = _picked_weights(input, target, weight, ignore_index)
    smooth = -(logp if weight is None else logp * weight).sum(1)
    kept = (target != ignore_index).to(input.dtype)
    smooth = smooth * kept
    smooth = _reduce(smooth, w, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def cross_entropy_backward_composite(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None,
                                     reduction: str, ignore_index: int, label_smoothing: float) -> Tensor:
    """d loss / d input, written with differentiable flambeau ops.

    Row i's gradient is ``s_i * (p_i * a_i - (1 - eps) w[t_i] onehot(t_i) - eps / C * w)`` with
    ``p_i = softmax(x_i)``, ``a_i = (1 - eps) w[t_i] + eps / C * sum(w)`` and ``s_i`` the upstream
    gradient (over the total weight of the kept targets for ``'mean'``), zero for ignored rows.
    """
    c = input.shape[1]
    eps = label_smoothing
    p = input.softmax(1)
    safe, w_t = _picked_weights(input, target, weight, ignore_index)
    w_t = w_t.expand(target.shape)
    kept = target != ignore_index
    s = (grad_output / w_t.sum() if reduction == "mean" else grad_output).expand(target.shape)
    s = flambeau.where(kept, s, s.new_zeros(()))  # exactly 0 for ignored rows, even when all are
    total_w = float(c) if weight is None else weight.sum()
    a = w_t * (1 - eps) + total_w * (eps / c)
    grad = p * (s * a).unsqueeze(1)
    hit = (s * w_t * (1 - eps)).unsqueeze(1)
    grad = grad.scatter_add(1, safe.unsqueeze(1), -hit)
    if eps != 0.0:
        spread = s.unsqueeze(1) * (eps / c)
        grad = grad - (spread if weight is None else spread * weight)
    return grad


def declarations() -> list[OpDecl]:
    return [
        OpDecl("nn_nll_loss", "(input: Tensor, target: Tensor, weight: Tensor?, reduction, ignore_index)", _nll_meta,
               composite=nll_loss_composite, method=False, export=False,
               doc="The negative log-likelihood of (N, C) log-probabilities at (N,) class indices."),
        OpDecl("nn_nll_loss_backward",
               "(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor?, reduction, ignore_index)",
               _nll_backward_meta, composite=nll_loss_backward_composite, method=False, export=False,
               doc="The gradient of ``nn_nll_loss`` with respect to its input."),
        OpDecl("nn_cross_entropy",
               "(input: Tensor, target: Tensor, weight: Tensor?, reduction, ignore_index, label_smoothing)",
               _ce_meta, composite=cross_entropy_composite, method=False, export=False,
               doc="Cross-entropy of (N, C) logits against (N,) class indices: log_softmax and the NLL in one op."),
        OpDecl("nn_cross_entropy_backward",
               "(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor?, reduction, ignore_index, "
               "label_smoothing)",
               _ce_backward_meta, composite=cross_entropy_backward_composite, method=False, export=False,
               differentiable=False,
               doc="The gradient of ``nn_cross_entropy`` with respect to its logits (softmax minus the smoothed "
                   "one-hot target, weighted and scaled)."),
    ]

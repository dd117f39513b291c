"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``, ``clip_grads_with_norm_``."""
from __future__ import annotations

import math
from typing import Any

import flambeau
from flambeau import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensors(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    r"""The norm of all ``tensors`` together, as if they were concatenated into one vector.

    Args:
        tensors: a tensor or an iterable of tensors (typically gradients).
        norm_type: the p of the p-norm; ``inf`` for the largest absolute value.
        error_if_nonfinite: raise if the total norm is nan or inf.
        foreach: accepted for PyTorch compatibility; the per-tensor norms are computed either way.
    """
    tensors = [t for t in _tensors(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return flambeau.tensor(0.0)
    with flambeau.no_grad():
        norms = [flambeau.linalg.vector_norm(t, norm_type) for t in tensors]
        device = tensors[0].device
        total = flambeau.linalg.vector_norm(flambeau.stack([n.to(device) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    r"""Scale the gradients of ``parameters`` by ``max_norm / (total_norm + 1e-6)`` where that is below 1."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with flambeau.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    r"""Clip the gradients of ``parameters`` in place so that their total norm is at most ``max_norm``.

    Args:
        parameters: a tensor or an iterable of tensors whose ``.grad`` is clipped.
        max_norm: the largest allowed total norm.
        norm_type: the p of the p-norm (``inf`` for the max norm).
        error_if_nonfinite: raise if the total norm is nan or inf (else the gradients are scaled by it).
        foreach: accepted for PyTorch compatibility.

    Returns:
        The total norm of the gradients before clipping (a 0-d tensor).
    """
    params = _tensors(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    r"""Deprecated: use :func:`clip_grad_norm_`."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: bool | None = None) -> None:
    r"""Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with flambeau.no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)

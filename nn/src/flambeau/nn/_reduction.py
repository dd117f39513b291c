"""The ``reduction`` argument of the losses, and the deprecated ``size_average``/``reduce`` pair it replaced."""
from __future__ import annotations

import warnings

from flambeau import Tensor


def get_enum(reduction: str) -> int:
    """0, 1 and 2 for ``'none'``, ``'mean'`` and ``'sum'`` (PyTorch's enum)."""
    if reduction == "none":
        return 0
    if reduction in ("mean", "elementwise_mean"):
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> str:
    """The ``reduction`` the deprecated ``size_average`` and ``reduce`` arguments ask for, with PyTorch's warning."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=4)
    return ret


def resolve(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """``reduction``, or what the legacy arguments give when either is set; checked."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    get_enum(reduction)
    return reduction


def apply(loss: Tensor, reduction: str) -> Tensor:
    """``loss`` reduced as ``reduction`` says (the mean over all elements for ``'mean'``)."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean()

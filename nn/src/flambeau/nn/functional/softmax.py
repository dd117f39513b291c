"""Functional forms: softmax, softmin, log_softmax, gumbel_softmax.

``softmax`` and ``log_softmax`` are core-tensor's ops (PyTorch keeps them in its tensor namespace);
these functions add ``torch.nn.functional``'s conveniences: the implicit ``dim`` of the old API, with
its deprecation warning, and ``softmin`` and ``gumbel_softmax`` built on them.
"""
from __future__ import annotations

import warnings
from typing import Any

import flambeau
from flambeau import Tensor

from .._lazy import LazyOp

__all__ = ["softmax", "softmin", "log_softmax", "gumbel_softmax"]

_softmax = LazyOp("softmax")
_log_softmax = LazyOp("log_softmax")


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """The dim that the old API picked when none was given (0 for 0-d, 1-d and 3-d inputs, else 1)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _dim(name: str, input: Tensor, dim: int | None, stacklevel: int) -> int:
    if dim is None:
        return _get_softmax_dim(name, input.dim(), stacklevel + 1)
    return dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    r"""Applies :math:`\text{Softmax}(x_i) = \frac{\exp(x_i)}{\sum_j \exp(x_j)}` along ``dim``.

    Args:
        input (Tensor): the input.
        dim (int): the dimension along which softmax is computed (every slice along it sums to 1).
        dtype (flambeau.dtype, optional): the input is cast to it before the operation.

    Example::

        >>> F.softmax(flambeau.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([0.0900, 0.2447, 0.6652])
    """
    return _softmax(input, _dim("softmax", input, dim, _stacklevel), dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    r"""Applies :math:`\text{Softmin}(x_i) = \frac{\exp(-x_i)}{\sum_j \exp(-x_j)}` along ``dim``.

    Args:
        input (Tensor): the input.
        dim (int): the dimension along which softmin is computed.
        dtype (flambeau.dtype, optional): the input is cast to it before the operation.
    """
    dim = _dim("softmin", input, dim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(-input, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    r"""Applies :math:`\log(\text{Softmax}(x))` along ``dim``, computed in one numerically stable step.

    Args:
        input (Tensor): the input.
        dim (int): the dimension along which log_softmax is computed.
        dtype (flambeau.dtype, optional): the input is cast to it before the operation.
    """
    return _log_softmax(input, _dim("log_softmax", input, dim, _stacklevel), dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    r"""Samples from the Gumbel-Softmax distribution over ``logits`` (unnormalised log-probabilities).

    Args:
        logits (Tensor): ``[..., num_features]`` unnormalised log-probabilities.
        tau (float): the non-negative temperature.
        hard (bool): if True, the samples are one-hot vectors, whose gradient is that of the soft
            samples (the straight-through estimator).
        eps (float): deprecated, unused.
        dim (int): the dimension along which softmax is computed.

    Returns:
        A tensor of ``logits``' shape, sampled from the Gumbel-Softmax distribution.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # Gumbel(0, 1) noise: -log(E) for E ~ Exponential(1)
    gumbels = -flambeau.empty_like(logits).exponential_().log()
    y_soft = _softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = flambeau.zeros_like(logits).scatter_(dim, index, 1.0)
    # straight through: the value of y_hard, the gradient of y_soft
    return y_hard - y_soft.detach() + y_soft


"""Functional forms: linear (``F.linear``, ``F.bilinear``)."""
from __future__ import annotations

from flambeau import Tensor
from flambeau.ops import function

__all__ = ["linear", "bilinear"]

_linear = function("nn_linear")
_bilinear = function("nn_bilinear")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Applies an affine map to the last dimension: :math:`y = x A^T + b`.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)`` or ``(in_features,)``.
        bias: ``(out_features,)`` or ``()``, optional.

    Returns:
        ``(*, out_features)`` (``(*)`` for a 1-D weight).
    """
    return _linear(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Applies a bilinear map: :math:`y = x_1^T A x_2 + b`.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)``, the same leading dimensions as ``input1``.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: ``(out_features,)``, optional.

    Returns:
        ``(*, out_features)``.
    """
    return _bilinear(input1, input2, weight, bias)

"""Functional forms: dropout.

They call core-tensor's ``dropout``, ``alpha_dropout``, ``feature_dropout`` and
``feature_alpha_dropout`` (PyTorch's tensor-namespace functions), whose masks come from flambeau's
generator (``fb.manual_seed`` makes them repeatable). The output is ``input * mask``, with the mask
``1 / (1 - p)`` or 0: autograd saves the mask and the backward pass multiplies by it.
"""
from __future__ import annotations

import warnings

import flambeau as fb
from flambeau._tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]



def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the others by ``1 / (1 - p)``, when ``training``.

    Args:
        input: the input tensor.
        p: the probability of an element being zeroed.
        training: apply dropout; when False, ``input`` is returned as it is.
        inplace: write the result into ``input``.
    """
    _check_p(p)
    return (fb.dropout_ if inplace else fb.dropout)(input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout (for SELU networks): dropped elements take SELU's negative saturation value and
    the result is rescaled so that zero mean and unit variance are kept."""
    _check_p(p)
    return (fb.alpha_dropout_ if inplace else fb.alpha_dropout)(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1): every element of a dropped channel takes the SELU
    saturation value."""
    _check_p(p)
    return (fb.feature_alpha_dropout_ if inplace else fb.feature_alpha_dropout)(input, p, training)


def _channels(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    """Feature dropout of (N, C, ...) input, or of (C, ...) input seen as a batch of one."""
    if not batched:
        input = input.unsqueeze(0)
    result = (fb.feature_dropout_ if inplace else fb.feature_dropout)(input, p, training)
    return result if batched else result.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability ``p``, scaling the others
    by ``1 / (1 - p)``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channels(input, p, training, inplace, ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        # PyTorch still reads 3-D input as (N, C, L) here, and says so
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return (fb.feature_dropout_ if inplace else fb.feature_dropout)(input, p, training)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channels(input, p, training, inplace, ndim == 5)

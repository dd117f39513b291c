"""Kernels for the activation ops of ``flambeau._core_ops.activation``: ``relu`` (numpy's SIMD
maximum) and ``_dropout_mask``, the dropout family's mask (Philox uniforms compared and scaled in
one C++ pass). The other ops there run as their composites."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C
from .._random import DEFAULT
from ._quiet import quiet
from .random import _bulk

_F32 = np.dtype(np.float32)
_mask_scale = _C.dropout_mask_scale


@quiet
def relu(input, out):
    # np.maximum keeps NaN (as torch.relu does); 0 is a weak scalar, so integer dtypes stay as they are
    np.maximum(input, 0, out=out)


def _dropout_mask(input, p, generator, out):
    """``1 / (1 - p)`` where a float32 uniform is below ``1 - p``, else 0: the draws of
    ``bernoulli(input, 1 - p)`` (the composite), so a seed gives the same mask either way."""
    gen = DEFAULT if generator is None else generator._native
    keep = 1.0 - float(p)
    scale = 1.0 / keep
    if out.dtype is _F32 and out.flags.c_contiguous:
        _bulk(gen, out, 0.0, 1.0, False)
        if _mask_scale(out, keep, scale):
            return
        draws = out.copy()
    else:
        draws = np.empty(out.shape, _F32)
        _bulk(gen, draws, 0.0, 1.0, False)
    # numpy compares float32 draws with the weak Python float in float32, as bernoulli does
    np.multiply(draws < keep, scale, out=out, casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {"relu": relu, "_dropout_mask": _dropout_mask}

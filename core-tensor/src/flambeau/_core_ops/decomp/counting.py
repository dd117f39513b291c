"""Counting and order statistics onto the core tier: ``bincount`` as a ``scatter_add`` of ones (or
of the weights) into zeroed bins, ``histc`` likewise after placing each element in its bin, and the
whole-tensor ``median``/``nanmedian`` as a pick from
``sort`` (a host decomposition on a backend without a sort kernel)."""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, scalar_like


@decomposition("bincount", "amin amax scatter_add to_dtype", cast=False)
def _bincount(x: Tensor, weights: Any = None, minlength: int = 0) -> Tensor:
    from ... import _dtypes
    from ..._creation import zeros, ones

    nbins = minlength
    if x.numel():
        if int(op("amin")(x, (), False).item()) < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        nbins = max(int(op("amax")(x, (), False).item()) + 1, minlength)
    index = as_dtype(x, _dtypes.int64)
    if weights is None:
        counts = zeros((nbins,), dtype=_dtypes.int64, device=x._device)
        return op("scatter_add")(counts, 0, index, ones((x.numel(),), dtype=_dtypes.int64, device=x._device))
    # float32 weights count in float32, every other dtype in float64 (PyTorch's rule)
    dt = _dtypes.float32 if weights._dtype is _dtypes.float32 else _dtypes.float64
    counts = zeros((nbins,), dtype=dt, device=x._device)
    return op("scatter_add")(counts, 0, index, as_dtype(weights, dt))


def _middle(x: Tensor, ignore_nan: bool) -> Tensor:
    """The lower median of all of ``x``'s elements: NaN if any is NaN (``median``), or of the
    others (``nanmedian``, NaN when all are)."""
    flat = x.reshape(-1)
    n = flat.numel()
    if n == 0:
        return op("sum")(flat, (), False) * math.nan if x._dtype.is_floating_point else flat.sum()
    ordered = op("sort")(flat, 0, False)[0]  # NaN last
    floating = x._dtype.is_floating_point
    nans = int(op("sum")(op("ne")(flat, flat), (), False).item()) if floating else 0
    if nans and not ignore_nan:
        return scalar_like(math.nan, x)
    count = n - nans
    if count == 0:
        return scalar_like(math.nan, x)
    return ordered.select(0, (count - 1) // 2).clone()


@decomposition("median", "sort ne sum select clone mul")
def _median(x: Tensor) -> Tensor:
    return _middle(x, False)


@decomposition("nanmedian", "sort ne sum select clone mul")
def _nanmedian(x: Tensor) -> Tensor:
    return _middle(x, True)


@decomposition("histc", "to_dtype reshape amin amax ge le sub mul where lt gather add ne bitwise_and linspace "
                        "scatter_add fill")
def _histc(x: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts in ``bins`` equal bins over ``[min, max]`` (the data's range when both are equal; one
    either side of a constant), elements outside ignored and ``max`` itself in the last bin.

    Each element's bin is ``floor((x - min) * bins / (max - min))``, then moved by one where the
    rounded position disagrees with the bin edges (``linspace(min, max, bins + 1)``), as PyTorch's
    and numpy's histogram kernels correct it; the counts are a ``scatter_add`` of ones.
    """
    from ... import _dtypes
    from ..._creation import full

    dt = x._dtype
    work = _dtypes.float32 if dt in (_dtypes.float16, _dtypes.bfloat16) else dt
    data = as_dtype(x, work).reshape(-1)
    low, high = float(min), float(max)
    if low == high and data.numel():
        low, high = float(op("amin")(data, (0,), False).item()), float(op("amax")(data, (0,), False).item())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"flambeau.histc(): range of [{low}, {high}] is not finite")
    inside = op("ge")(data, low) & op("le")(data, high)
    scaled = op("where")(inside, (data - low) * (bins / (high - low)), 0.0)
    pos = op("to_dtype")(scaled, _dtypes.int64)  # truncation is floor: the inside positions are >= 0
    pos = op("where")(op("lt")(pos, bins), pos, bins - 1)
    edges = op("linspace")(low, high, bins + 1, dtype=work, device=x._device)
    below = inside & op("lt")(data, op("gather")(edges, 0, pos))
    pos = op("where")(below, pos - 1, pos)
    above = inside & op("ne")(pos, bins - 1) & op("ge")(data, op("gather")(edges, 0, pos + 1))
    pos = op("where")(above, pos + 1, pos)
    counts = full((bins,), 0, dtype=work, device=x._device)
    ones = op("to_dtype")(inside, work)
    return op("scatter_add")(counts, 0, op("where")(inside, pos, 0), ones)

"""``frexp`` and ``nextafter`` onto the core tier, by exact arithmetic rather than bit views.

The core tier has bitwise ops but no dtype-reinterpreting view, so the exponent is found with
``floor(log(|x|) / ln 2) + 1`` and corrected: ``m = x * 2**-e`` is exact (a power of two, applied
in two halves so that neither factor over- or underflows, subnormals included), and one step
either way puts ``|m|`` in [0.5, 1) whatever the rounding of the logarithm. Every result is
therefore exact, as the bit-manipulating kernels' are.

``nextafter`` adds or subtracts the spacing of the floats at ``x``: ``2**(e - p)`` for a mantissa
of ``p`` bits, half that when the magnitude shrinks from an exact power of two, never below the
smallest subnormal; ``x ± spacing`` is exact. Zero steps to the smallest subnormal of the right
sign, an infinity towards a finite to the largest finite, equal operands give ``other`` and NaN
gives NaN (C's nextafter).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._tensor import Tensor
from . import decomposition
from ._util import LN2, as_dtype, op, result_dtype, scalar_like


def _work_dtype(dt: Any) -> Any:
    from ... import _dtypes

    return dt if dt in (_dtypes.float32, _dtypes.float64) else _dtypes.float32


def _pow2(e: Tensor) -> Tensor:
    """``2**e`` for integral-valued float ``e`` (exact: a power of two in range)."""
    return op("pow")(scalar_like(2.0, e), e)


def _split(x: Tensor) -> tuple[Tensor, Tensor]:
    """``(m, e)`` with ``x = m * 2**e``, ``0.5 <= |m| < 1`` for finite non-zero ``x``; ``e`` a float tensor.

    Zero, infinities and NaN come back as ``(x, 0)``."""
    where = op("where")
    magnitude = op("abs")(x)
    zero = scalar_like(0.0, x)
    one = scalar_like(1.0, x)
    # x where it is finite and non-zero, 1 elsewhere: the logarithm stays finite
    regular = op("bitwise_and")(op("gt")(magnitude, 0.0), op("lt")(magnitude, math.inf))
    safe = where(regular, magnitude, one)
    e = op("floor")(op("log")(safe) / LN2) + 1.0
    half = op("floor")(e * 0.5)
    m = x * _pow2(-half) * _pow2(half - e)
    mm = op("abs")(m)
    up = op("ge")(mm, 1.0)
    down = op("lt")(mm, 0.5)
    m = where(up, m * 0.5, where(down, m * 2.0, m))
    e = where(up, e + 1.0, where(down, e - 1.0, e))
    return where(regular, m, x), where(regular, e, zero)


@decomposition("frexp", "abs gt lt ge bitwise_and where log div floor add sub mul neg pow to_dtype")
def _frexp(x: Tensor) -> tuple[Tensor, Tensor]:
    from ... import _dtypes

    m, e = _split(as_dtype(x, _work_dtype(x._dtype)))
    return as_dtype(m, x._dtype), as_dtype(e, _dtypes.int32)


@decomposition("nextafter", "abs gt lt ge eq ne bitwise_and bitwise_or where log div floor add sub mul neg pow "
               "to_dtype")
def _nextafter(x: Any, y: Any) -> Tensor:
    dt = result_dtype("nextafter", x, y)
    x, y = as_dtype(x, dt), as_dtype(y, dt)
    if not isinstance(x, Tensor):
        x = scalar_like(x, y)
    where = op("where")
    info = np.finfo(dt.numpy_dtype)
    bits = int(info.nmant) + 1  # mantissa bits, the implicit one counted
    tiny = float(info.smallest_subnormal)
    m, e = _split(x)
    toward_up = op("lt")(x, y)
    # the magnitude shrinks when stepping down from a positive x or up from a negative one
    shrinks = op("bitwise_or")(op("bitwise_and")(toward_up, op("lt")(x, 0.0)),
                               op("bitwise_and")(op("bitwise_not")(toward_up), op("gt")(x, 0.0)))
    exponent = e - float(bits) - where(op("bitwise_and")(shrinks, op("eq")(op("abs")(m), 0.5)),
                                       scalar_like(1.0, e), scalar_like(0.0, e))
    spacing = where(op("lt")(exponent, math.log2(tiny)), scalar_like(tiny, x), _pow2(exponent))
    stepped = where(toward_up, x + spacing, x - spacing)
    stepped = where(op("eq")(x, 0.0), where(toward_up, scalar_like(tiny, x), scalar_like(-tiny, x)), stepped)
    big = float(info.max)
    stepped = where(op("eq")(x, math.inf), scalar_like(big, x), stepped)
    stepped = where(op("eq")(x, -math.inf), scalar_like(-big, x), stepped)
    nan = op("bitwise_or")(op("ne")(x, x), op("ne")(y, y))
    stepped = where(op("eq")(x, y), y, stepped)
    return where(nan, x + y, stepped)

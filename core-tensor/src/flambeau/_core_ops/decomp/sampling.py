"""``multinomial`` and ``poisson`` onto the core tier's ``uniform`` (drawn with the op's generator,
so a seeded generator reproduces them; the stream differs from the CPU kernel's).

multinomial
    With replacement: each row's cumulative sums, and for every uniform ``u * total`` the first
    category whose cumulative sum exceeds it (``searchsorted``, right side): a category of
    probability 0 never comes first. A draw that rounding leaves at the row's total gets the last
    category of positive probability. Without replacement: exponential races, the
    ``num_samples`` largest keys ``p / E`` (``E ~ Exp(1)``) in order, taken one round at a time
    (``argmax``, then the winner's key scattered to -1), which is sampling proportional to ``p``
    without replacement (Efraimidis and Spirakis, 2006).

poisson
    Rates below 10: inversion, exact (one uniform per element against the cumulative sums of the
    probabilities, one term a round until every element has passed its uniform). Rates from
    10: Hörmann's transformed rejection with squeeze, PTRS ("The transformed rejection method for
    generating Poisson random variables", Insurance: Mathematics and Economics 12, 1993; the
    constants are the paper's), repeated over the whole tensor until every element is accepted
    (acceptance is about 0.9 a round). The acceptance test compares ``k log(rate) - lgamma(k + 1)``
    with ``rate``, which cancels badly in float32 for large rates, so poisson computes in float64.
"""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, scalar_like

#: Rates past numpy's largest give PyTorch's overflowed int64 sample, as the CPU kernel does.
_POISSON_LAM_MAX = 9.223372006484771e18
_PTRS_FROM = 10.0


def _any(mask: Tensor) -> bool:
    return mask.numel() > 0 and bool(op("sum")(mask).item())


def _uniform_like(x: Tensor, generator: Any) -> Tensor:
    from ..._creation import empty

    return op("uniform")(empty(tuple(x._data.shape), dtype=x._dtype, device=x._device), 0.0, 1.0,
                         generator=generator)


def _check_rows(rows: Tensor, replacement: bool) -> None:
    """PyTorch's data-dependent checks of the probabilities, in its order (the CPU kernel's too)."""
    finite = op("bitwise_and")(op("eq")(rows, rows), op("lt")(op("abs")(rows), math.inf))
    if replacement:
        if _any(op("lt")(rows, 0.0)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if _any(op("bitwise_not")(finite)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    elif _any(op("bitwise_not")(op("bitwise_and")(finite, op("ge")(rows, 0.0)))):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if _any(op("le")(op("sum")(rows, 1), 0.0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _with_replacement(rows: Tensor, num_samples: int, generator: Any) -> Tensor:
    from ... import _dtypes
    from ..._creation import arange, empty

    count, n = rows._data.shape
    cdf = op("cumsum")(rows, 1)
    total = op("unsqueeze")(op("select")(cdf, 1, n - 1), 1)
    u = op("uniform")(empty((count, num_samples), dtype=rows._dtype, device=rows._device), 0.0, 1.0,
                      generator=generator)
    picked = op("searchsorted")(cdf, u * total, right=True)
    positions = arange(n, dtype=_dtypes.int64, device=rows._device)
    last = op("amax")(op("where")(op("gt")(rows, 0.0), positions, scalar_like(-1, positions)), 1, True)
    return op("where")(op("gt")(picked, last), last, picked)


def _without_replacement(rows: Tensor, num_samples: int, generator: Any) -> Tensor:
    from ... import _dtypes
    from ..._creation import full

    count = rows._data.shape[0]
    exponential = -op("log")(1 - _uniform_like(rows, generator))  # 1 - u in (0, 1]: finite, >= 0
    keys = rows / exponential
    out = full((count, num_samples), 0, dtype=_dtypes.int64, device=rows._device)
    for t in range(num_samples):
        winner = op("argmax")(keys, 1, True)
        out = op("scatter")(out, 1, full((count, 1), t, dtype=_dtypes.int64, device=rows._device), winner)
        keys = op("scatter")(keys, 1, winner, value=-1.0)
    return out


@decomposition("multinomial", "eq lt le ge gt abs bitwise_and bitwise_not sum cumsum select unsqueeze uniform mul "
               "searchsorted arange amax where log sub neg div argmax scatter fill view to_dtype")
def _multinomial(x: Tensor, num_samples: int, replacement: bool = False, generator: Any = None) -> Tensor:
    from ... import _dtypes

    work = _dtypes.float64 if x._dtype is _dtypes.float64 else _dtypes.float32
    rows = as_dtype(x, work)
    rows = rows if rows._data.ndim == 2 else op("unsqueeze")(rows, 0)
    _check_rows(rows, bool(replacement))
    sample = _with_replacement if replacement else _without_replacement
    out = sample(rows, int(num_samples), generator)
    return out if x._data.ndim == 2 else op("view")(out, (int(num_samples),))


# -- poisson -------------------------------------------------------------------------------------

def _inversion(rate: Tensor, generator: Any) -> Tensor:
    """Exact Poisson samples for small rates by inversion: one uniform ``u`` per element, and the
    least ``k`` whose cumulative probability ``sum_(j <= k) e^-rate rate^j / j!`` exceeds it (the
    terms built by ``p_k = p_(k-1) rate / k``; float64 keeps the sum exact to ~1e-16 for rates < 10).
    Rounds run until every element has stopped, about the largest sample's value."""
    u = _uniform_like(rate, generator)
    term = op("exp")(-rate)
    cumulative = term
    k = rate * 0.0
    pending = op("gt")(u, cumulative)
    n = 0
    while _any(pending):
        n += 1
        term = term * rate / float(n)
        cumulative = cumulative + term
        k = op("where")(pending, k + 1.0, k)
        # a u the float64 sum never passes (1 - u below its rounding) stops where the terms vanish
        pending = op("bitwise_and")(op("bitwise_and")(pending, op("gt")(u, cumulative)), op("gt")(term, 0.0))
    return k


def _ptrs(rate: Tensor, generator: Any) -> Tensor:
    """Hörmann's PTRS for rates of at least 10, rounds over the whole tensor until all accept."""
    where, log = op("where"), op("log")
    slam = op("sqrt")(rate)
    loglam = log(rate)
    b = slam * 2.53 + 0.931
    a = b * 0.02483 - 0.059
    invalpha = 1.1328 / (b - 3.4) + 1.1239
    vr = 0.9277 - 3.6224 / (b - 2.0)
    result = rate * 0.0
    pending = op("ge")(rate, 0.0)
    while _any(pending):
        u = _uniform_like(rate, generator) - 0.5
        v = _uniform_like(rate, generator)
        us = 0.5 - op("abs")(u)
        us_safe = where(op("gt")(us, 0.0), us, scalar_like(1e-300, us))  # u = -0.5 gives us = 0: rejected
        k = op("floor")((a * 2.0 / us_safe + b) * u + rate + 0.43)
        quick = op("bitwise_and")(op("ge")(us, 0.07), op("le")(v, vr))
        reject = op("bitwise_or")(op("lt")(k, 0.0), op("bitwise_and")(op("lt")(us, 0.013), op("gt")(v, us)))
        k_safe = where(op("lt")(k, 0.0), scalar_like(0.0, k), k)
        lhs = log(where(op("gt")(v, 0.0), v, scalar_like(1e-300, v))) + log(invalpha) - log(a / (us_safe * us_safe) + b)
        rhs = k_safe * loglam - rate - op("lgamma")(k_safe + 1.0)
        accept = op("bitwise_or")(quick, op("bitwise_and")(op("bitwise_not")(reject), op("le")(lhs, rhs)))
        taken = op("bitwise_and")(pending, accept)
        result = where(taken, k, result)
        pending = op("bitwise_and")(pending, op("bitwise_not")(accept))
    return result


@decomposition("poisson", "ge lt le gt eq ne abs bitwise_and bitwise_or bitwise_not sum where exp neg mul add sub "
               "div floor sqrt log lgamma uniform to_dtype")
def _poisson(x: Tensor, generator: Any = None) -> Tensor:
    from ... import _dtypes

    where = op("where")
    rate = as_dtype(x, _dtypes.float64)
    if _any(op("bitwise_not")(op("ge")(rate, 0.0))):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    huge = op("gt")(rate, _POISSON_LAM_MAX)
    large = op("ge")(rate, _PTRS_FROM)
    one = scalar_like(1.0, rate)
    # each method runs on every element (the other's rates replaced by harmless ones), then selects
    small = _inversion(where(large, one, rate), generator)
    big = _ptrs(where(op("bitwise_and")(large, op("bitwise_not")(huge)), rate, scalar_like(_PTRS_FROM, rate)),
                generator) if _any(large) else small
    out = where(large, big, small)
    return where(huge, scalar_like(float(-2 ** 63), rate), out)

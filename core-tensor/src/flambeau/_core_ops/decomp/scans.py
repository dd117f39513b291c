"""Scans other than ``cumsum`` onto the core tier: ``cummax``, ``cummin`` and ``logcumsumexp``.

Each is an inclusive scan under an associative operator, computed by doubling (Hillis and Steele,
"Data parallel algorithms", CACM 29(12), 1986): after the round with offset ``k`` (1, 2, 4, ...)
position ``i`` holds the combination of positions ``i - 2k + 1 .. i``; ``ceil(log2 n)`` rounds,
each a few elementwise passes over the whole tensor, instead of the ``n`` sequential steps a
kernel takes.

- ``cummax``/``cummin`` scan (value, index) pairs. The operator takes the later pair when its
  value is NaN, or when neither is NaN and the later value is ``>=`` (``<=``) the earlier one:
  PyTorch's rule (ties and NaNs report the latest index; NaN propagates). That is the maximum
  under an order with NaN on top and ties broken towards later positions, so it is associative.
  The values are then gathered from the input at the indices found, so that the gradient reaches
  exactly the element each result came from, as PyTorch's gradient does.
- ``logcumsumexp`` scans with ``logaddexp`` (stable for any spread of values: no global shift
  that would underflow early terms). The half types compute in float32. Complex inputs, whose
  ``logaddexp`` PyTorch defines on the principal branch, use ``log(cumsum(exp(x - m))) + m`` with
  ``m`` the slice's largest real part: exact for the magnitudes that do not underflow after the
  shift.
"""
from __future__ import annotations

from typing import Callable

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype

_State = tuple[Tensor, ...]


def _doubling_scan(state: _State, combine: Callable[[_State, _State], _State], dim: int) -> _State:
    """The inclusive scan of ``state`` (tensors of one shape) along ``dim`` under ``combine``."""
    n = state[0]._data.shape[dim]
    k = 1
    while k < n:
        earlier = tuple(op("narrow")(t, dim, 0, n - k) for t in state)
        later = tuple(op("narrow")(t, dim, k, n - k) for t in state)
        combined = combine(earlier, later)
        state = tuple(op("cat")([op("narrow")(t, dim, 0, k), c], dim) for t, c in zip(state, combined))
        k *= 2
    return state


def _positions(x: Tensor, dim: int) -> Tensor:
    """int64 indices ``0 .. n-1`` along ``dim``, broadcast to ``x``'s shape."""
    from ... import _dtypes

    shape = x._data.shape
    idx = op("arange")(0, shape[dim], 1, dtype=_dtypes.int64, device=x._device)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return idx.view(tuple(view)).expand(tuple(shape))


def _cum_extreme(x: Tensor, dim: int, beats: str) -> tuple[Tensor, Tensor]:
    from ...ops.meta import wrap_dim
    from ..._grad_mode import no_grad

    if x._data.ndim == 0:  # a 0-d input is its own running extreme, at index 0
        values, indices = _cum_extreme(x.unsqueeze(0), 0, beats)
        return values.squeeze(0), indices.squeeze(0)
    dim = wrap_dim(dim, x._data.ndim)
    floating = x._dtype.is_floating_point

    def combine(a: _State, b: _State) -> _State:
        (va, ia), (vb, ib) = a, b
        take_b = op(beats)(vb, va)  # False where either is NaN
        if floating:
            take_b = take_b | op("ne")(vb, vb)  # a later NaN always wins
        return op("where")(take_b, vb, va), op("where")(take_b, ib, ia)

    with no_grad():
        _, indices = _doubling_scan((x.detach(), _positions(x, dim)), combine, dim)
    return op("gather")(x, dim, indices), indices


@decomposition("cummax", "narrow cat ge ne bitwise_or where arange view expand gather")
def _cummax(x: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _cum_extreme(x, dim, "ge")


@decomposition("cummin", "narrow cat le ne bitwise_or where arange view expand gather")
def _cummin(x: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _cum_extreme(x, dim, "le")


@decomposition("logcumsumexp", "narrow cat logaddexp real amax sub exp cumsum log add to_dtype")
def _logcumsumexp(x: Tensor, dim: int) -> Tensor:
    from ... import _dtypes
    from ...ops.meta import wrap_dim

    dt = result_dtype("logcumsumexp", x, dim)
    if x._data.ndim == 0:
        return as_dtype(x, dt).clone()
    dim = wrap_dim(dim, x._data.ndim)
    if dt.is_complex:
        if x._data.shape[dim] == 0:
            return x.clone()
        m = op("amax")(op("real")(x).detach(), (dim,), True)
        m = op("where")(op("eq")(op("abs")(m), float("inf")), 0.0, m)  # an infinite shift would give NaN
        return op("log")(op("cumsum")(op("exp")(x - m), dim)) + m
    work = _dtypes.float32 if dt in (_dtypes.float16, _dtypes.bfloat16) else dt
    (result,) = _doubling_scan((as_dtype(x, work),), lambda a, b: (op("logaddexp")(a[0], b[0]),), dim)
    return result

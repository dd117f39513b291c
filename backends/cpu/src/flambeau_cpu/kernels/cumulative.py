"""Kernels for the cumulative ops: cumsum, cumprod, cummax, cummin, logcumsumexp.

numpy's ``accumulate`` loops are used where the C++ scans (``_C.cumsum_lastdim``...) are absent
or not faster; see :func:`_native` for which one runs.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._quiet import quiet_all

try:
    from .. import _C
except ImportError:  # a source checkout without the built extension
    _C = None

#: dtypes the C++ scans take (numpy dtype objects: comparing them is cheaper than their names)
_NATIVE_DTYPES = frozenset(np.dtype(n) for n in ("float32", "float64", "int64"))


def _native(fn: Any, input: np.ndarray, out: np.ndarray, dim: int) -> bool:
    """Runs the C++ scan ``fn`` along the last dim when it applies; says whether it did."""
    if fn is None or dim != -1 and dim != input.ndim - 1 or out.dtype != input.dtype:
        return False
    if input.dtype not in _NATIVE_DTYPES or not out.flags.c_contiguous:
        return False
    src = input if input.flags.c_contiguous else np.ascontiguousarray(input)
    try:
        fn(src, out)  # checks shapes, bounds and overlap again before writing
    except ValueError:  # out partly overlapping input, an unaligned view...: numpy copes
        return False
    return True


def _scan(ufunc: np.ufunc, name: str) -> Callable[..., Any]:
    fn = getattr(_C, name, None)

    def kernel(input, dim, dtype, out):
        if input.ndim == 0:
            np.copyto(out, input, casting="unsafe")
            return
        if input.size and _native(fn, input, out, dim):
            return
        src = input if input.dtype == out.dtype else input.astype(out.dtype)
        ufunc.accumulate(src, axis=dim, out=out)
    return kernel


def _cum_extreme(ufunc: np.ufunc) -> Callable[..., Any]:
    def kernel(input, dim, out):
        values, indices = out
        if input.ndim == 0:
            np.copyto(values, input)
            indices.fill(0)
            return
        if input.size == 0:
            return
        with np.errstate(invalid="ignore"):  # NaN propagates, as intended
            running = ufunc.accumulate(input, axis=dim)
        # A position takes over the index where it equals the running extreme (ties: the latest
        # one, as PyTorch's >=) or is NaN (every NaN takes over; nothing takes over from one).
        hit = running == input
        if input.dtype.kind == "f" or input.dtype.name == "bfloat16":
            hit |= np.isnan(input)
        shape = [1] * input.ndim
        shape[dim] = input.shape[dim]
        positions = np.arange(input.shape[dim], dtype=np.int64).reshape(shape)
        np.maximum.accumulate(np.where(hit, positions, 0), axis=dim, out=indices)
        np.copyto(values, running)
    return kernel


def _log_add_exp_complex(acc: np.ndarray, new: np.ndarray, infinite: bool) -> np.ndarray:
    """``log(exp(acc) + exp(new))`` for complex arrays, PyTorch's way (its imaginary part is not
    wrapped into (-pi, pi]: the larger operand's angle plus the correction's).

    The operand with the smaller real part (``acc`` on a tie) is ``lo``, the other ``hi``; then
    ``log(e^lo + e^hi) = hi + log1p(w)`` with ``w = e^(lo - hi)``, ``|w| <= 1``, so nothing
    overflows. ``log1p(w) = log|1 + w| + i arg(1 + w)`` with ``log|1 + w| = log1p(w_r (2 + w_r) + w_i^2) / 2``
    keeps its precision when ``|w|`` is tiny (numpy's complex log1p is ``log(1 + w)``).
    ``infinite``: the input holds infinities, so check for both real parts infinite and equal
    (-inf gives -inf + 0j, +inf the plain formula). NaN is the caller's business.
    """
    swap = acc.real > new.real
    lo = np.where(swap, new, acc)
    hi = np.where(swap, acc, new)
    w = np.exp(lo - hi)
    wr, wi = w.real, w.imag
    result = np.empty_like(acc)
    result.real = np.log1p(wr * (2.0 + wr) + wi * wi) * 0.5 + hi.real
    result.imag = np.arctan2(wi, 1.0 + wr) + hi.imag
    if infinite:
        both_inf = np.isinf(lo.real) & (lo.real == hi.real)
        if both_inf.any():
            plain = np.log(np.exp(lo) + np.exp(hi))
            result = np.where(both_inf, np.where(lo.real < 0, complex(-np.inf, 0.0), plain), result)
    return result


def _logcumsumexp_complex(input: np.ndarray, dim: int, out: np.ndarray) -> None:
    """A scan along ``dim`` (one vector step per position, across all the other dims), in complex128,
    from PyTorch's starting value ``-inf + 0j`` (so a leading ``-inf + aj`` becomes ``-inf + 0j``).
    PyTorch's step gives NaN + NaNj when either operand has a NaN part, so every position from the
    first NaN on is NaN: set afterwards, for the whole scan at once."""
    src = np.moveaxis(input.astype(np.complex128, copy=False), dim, 0)
    result = np.empty(src.shape, np.complex128)
    acc = np.full(src.shape[1:], complex(-np.inf, 0.0))
    with np.errstate(all="ignore"):  # inf - inf and exp(-inf + nan j) inside: handled here and above
        infinite = bool(np.isinf(src.real).any() or np.isinf(src.imag).any())
        for i in range(src.shape[0]):
            acc = result[i] = _log_add_exp_complex(acc, src[i], infinite)
        nan = np.logical_or.accumulate(np.isnan(src.real) | np.isnan(src.imag), axis=0)
    if nan.any():
        result[nan] = complex(np.nan, np.nan)
    np.copyto(np.moveaxis(out, dim, 0), result, casting="unsafe")


def logcumsumexp(input, dim, out):
    if input.ndim == 0:  # PyTorch copies a 0-d input, -inf + aj included
        np.copyto(out, input)
        return
    if input.dtype.kind == "c":
        _logcumsumexp_complex(input, dim, out)
        return
    src = input.astype(np.float32) if input.dtype.name in ("float16", "bfloat16") else input
    with np.errstate(invalid="ignore"):  # -inf - -inf inside logaddexp: the result is still right
        np.copyto(out, np.logaddexp.accumulate(src, axis=dim), casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    "cumsum": _scan(np.add, "cumsum_lastdim"), "cumprod": _scan(np.multiply, "cumprod_lastdim"),
    "cummax": _cum_extreme(np.maximum), "cummin": _cum_extreme(np.minimum), "logcumsumexp": logcumsumexp,
})

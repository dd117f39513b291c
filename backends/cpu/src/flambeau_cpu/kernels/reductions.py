"""numpy kernels for reductions."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._quiet import quiet, quiet_all


def _axes(input: np.ndarray, dim: Any) -> Any:
    """numpy's ``axis`` for a reduction's ``dim`` (None or an empty sequence: all dims)."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    if input.ndim == 0:
        return None
    return dim if isinstance(dim, int) else tuple(dim)


def _reducer(ufunc_reduce: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, dim, keepdim, dtype, out):
        if dim.__class__ is int and input.ndim:  # one dim: positional arguments, a third cheaper than keywords
            ufunc_reduce(input, dim, out.dtype if out.dtype.kind != "V" else None, out, bool(keepdim))
            return
        axis = _axes(input, dim)
        if input.ndim == 0:
            np.copyto(out, input, casting="unsafe")
            return
        ufunc_reduce(input, axis=axis, keepdims=keepdim and axis is not None or (keepdim and input.ndim > 0),
                     out=out, dtype=out.dtype if out.dtype.kind != "V" else None)
    return kernel


# The ufuncs' own reductions, each kernel built once: np.sum and np.prod are Python wrappers that
# end in the same np.add.reduce / np.multiply.reduce for an ndarray, at about a microsecond a call.
_sum = _reducer(np.add.reduce)
_mean = _reducer(np.mean)
_prod = _reducer(np.multiply.reduce)


@quiet  # inf - inf in a sum: nan without numpy's warning, as in PyTorch
def sum(input, dim, keepdim, dtype, out):
    _sum(input, dim, keepdim, dtype, out)


@quiet
def mean(input, dim, keepdim, dtype, out):
    if input.size == 0:
        out.fill(np.nan)
        return
    if (dim is None or dim.__class__ is int) and input.ndim and out.dtype.kind in "fc" and out.itemsize >= 4:
        # np.mean's own steps (a sum, then a division) without its Python wrapper (~3 us). float16
        # and bfloat16 stay with np.mean, which accumulates them in float32.
        np.add.reduce(input, dim, out.dtype, out, bool(keepdim))
        np.true_divide(out, input.size if dim is None else input.shape[dim], out=out)
        return
    _mean(input, dim, keepdim, dtype, out)


@quiet
def prod(input, dim, keepdim, dtype, out):
    _prod(input, dim, keepdim, dtype, out)


def _extreme(reduce: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, dim, keepdim, out):
        axis = _axes(input, dim)
        if input.ndim == 0:
            np.copyto(out, input)
            return
        reduce(input, axis=axis, keepdims=keepdim, out=out)
    return kernel


def _extreme_dim(arg: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, dim, keepdim, out):
        values, indices = out
        if input.ndim == 0:
            np.copyto(values, input)
            indices.fill(0)
            return
        index = arg(input, axis=dim, keepdims=True)
        np.copyto(values, np.take_along_axis(input, index, axis=dim).reshape(values.shape))
        np.copyto(indices, index.reshape(indices.shape))
    return kernel


def _arg(arg: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, dim, keepdim, out):
        if input.ndim == 0:
            out.fill(0)
            return
        np.copyto(out, arg(input, axis=dim, keepdims=keepdim))
    return kernel


def _logical(reduce: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, dim, keepdim, out):
        axis = _axes(input, dim)
        if input.ndim == 0:
            np.copyto(out, input != 0, casting="unsafe")
            return
        np.copyto(out, reduce(input, axis=axis, keepdims=keepdim), casting="unsafe")
    return kernel


# max/min over NaN (bfloat16's compare warns) and the like: no numpy warnings, as in PyTorch.
KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    "sum": sum, "mean": mean, "prod": prod,
    "amax": _extreme(np.amax), "amin": _extreme(np.amin),
    "max_dim": _extreme_dim(np.argmax), "min_dim": _extreme_dim(np.argmin),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "all": _logical(np.all), "any": _logical(np.any),
})

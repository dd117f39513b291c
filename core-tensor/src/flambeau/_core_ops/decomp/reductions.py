"""Reductions as sums, extremes and counts over the core tier's reductions along dims."""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, count, is_complex, op, reduced_dims, result_dtype


def _dims_arg(x: Tensor, dim: Any) -> tuple[int, ...]:
    return reduced_dims(x, dim)


def _accumulator(dt: Any) -> Any:
    """The dtype a reduction accumulates in: float32 for the half types (the core's promise)."""
    from ... import _dtypes

    return _dtypes.float32 if dt in (_dtypes.float16, _dtypes.bfloat16) else dt


@decomposition("mean", "sum div to_dtype")
def _mean(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = result_dtype("mean", x, dim, keepdim, dtype)
    dims = _dims_arg(x, dim)
    total = op("sum")(as_dtype(x, dt), dims, keepdim, dtype=_accumulator(dt))
    return total / count(x, dims)  # 0 / 0 is NaN for an empty reduction, as PyTorch


@decomposition("nansum", "isnan where sum to_dtype")
def _nansum(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = result_dtype("nansum", x, dim, keepdim, dtype)
    if x._dtype.is_floating_point:
        x = op("where")(op("isnan")(x), 0.0, x)
    return op("sum")(as_dtype(x, dt), _dims_arg(x, dim), keepdim)


@decomposition("nanmean", "isnan logical_not where sum div to_dtype")
def _nanmean(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = result_dtype("nanmean", x, dim, keepdim, dtype)
    dims = _dims_arg(x, dim)
    keep = op("logical_not")(op("isnan")(x))
    total = op("sum")(as_dtype(op("where")(keep, x, 0.0), dt), dims, keepdim)
    return total / op("sum")(keep, dims, keepdim)


@decomposition("all", "eq sum to_dtype")
def _all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return op("sum")(op("eq")(x, 0), _dims_arg(x, dim), keepdim) == 0  # no zero: an empty reduction is True


@decomposition("any", "ne sum gt to_dtype")
def _any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return op("sum")(op("ne")(x, 0), _dims_arg(x, dim), keepdim) > 0


@decomposition("count_nonzero", "ne sum")
def _count_nonzero(x: Tensor, dim: Any = None) -> Tensor:
    return op("sum")(op("ne")(x, 0), _dims_arg(x, dim), False)


def _variance(name: str, x: Tensor, dim: Any, correction: Any, keepdim: bool) -> tuple[Tensor, Tensor]:
    """(variance, mean): the mean subtracted first (two passes), as accurate as the kernels'."""
    dims = _dims_arg(x, dim)
    n = count(x, dims)
    mean = op("mean")(x, dims, True)
    d = x - mean
    sq = op("abs")(d) ** 2 if is_complex(d) else d * d
    c = 1 if correction is None else correction
    var = op("sum")(sq, dims, keepdim) / max(n - c, 0)  # n <= correction: inf or NaN, as PyTorch
    return var, mean if keepdim else op("sum")(mean, dims, False)


@decomposition("var", "mean sub mul abs pow sum div to_dtype")
def _var(x: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    return _variance("var", x, dim, correction, keepdim)[0]


@decomposition("std", "var sqrt to_dtype")
def _std(x: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    return op("sqrt")(_variance("std", x, dim, correction, keepdim)[0])


@decomposition("var_mean", "mean sub mul abs pow sum div to_dtype")
def _var_mean(x: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple:
    return _variance("var_mean", x, dim, correction, keepdim)


@decomposition("std_mean", "mean sub mul abs pow sum div sqrt to_dtype")
def _std_mean(x: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple:
    var, mean = _variance("std_mean", x, dim, correction, keepdim)
    return op("sqrt")(var), mean


@decomposition("logsumexp", "amax abs eq where sub exp sum log add squeeze to_dtype")
def _logsumexp(x: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    dt = result_dtype("logsumexp", x, dim, keepdim)
    x = as_dtype(x, _accumulator(dt))
    dims = _dims_arg(x, dim)
    if x.numel() == 0:
        return op("log")(op("sum")(op("exp")(x), dims, keepdim))
    m = op("amax")(x, dims, True)
    m = op("where")(op("abs")(m) == math.inf, 0.0, m)  # all -inf (or an inf): no shift
    s = op("log")(op("sum")(op("exp")(x - m), dims, keepdim))
    return s + (m if keepdim else op("sum")(m, dims, False))


@decomposition("aminmax", "amin amax")
def _aminmax(x: Tensor, dim: Any = None, keepdim: bool = False) -> tuple:
    dims = () if dim is None else (dim,)
    return op("amin")(x, dims, keepdim), op("amax")(x, dims, keepdim)


@decomposition("max_dim", "amax argmax")
def _max_dim(x: Tensor, dim: Any, keepdim: bool = False) -> tuple:
    return op("amax")(x, (dim,), keepdim), op("argmax")(x, dim, keepdim)


@decomposition("min_dim", "amin argmin")
def _min_dim(x: Tensor, dim: Any, keepdim: bool = False) -> tuple:
    return op("amin")(x, (dim,), keepdim), op("argmin")(x, dim, keepdim)


@decomposition("linalg_vector_norm", "abs mul sum sqrt amax amin ne pow to_dtype")
def _vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = result_dtype("linalg_vector_norm", x, ord, dim, keepdim, dtype)
    if dtype is not None:
        x = as_dtype(x, dtype)
    a = as_dtype(op("abs")(x), _accumulator(dt))
    dims = _dims_arg(x, dim)
    if ord == math.inf:
        return op("amax")(a, dims, keepdim)
    if ord == -math.inf:
        return op("amin")(a, dims, keepdim)
    if ord == 0:
        return as_dtype(op("sum")(op("ne")(a, 0), dims, keepdim), dt)
    if ord == 1:
        return op("sum")(a, dims, keepdim)
    if ord == 2:
        return op("sqrt")(op("sum")(a * a, dims, keepdim))
    return op("sum")(a ** ord, dims, keepdim) ** (1.0 / ord)


@decomposition("dist", "sub linalg_vector_norm to_dtype")
def _dist(a: Tensor, b: Tensor, p: Any = 2) -> Tensor:
    return op("linalg_vector_norm")(a - b, p)

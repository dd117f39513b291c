"""Cases for the statistical and cumulative reductions: nansum/nanmean, var/std and their
``_mean`` pairs, aminmax, median, mode, quantile, logsumexp, norm, dist, count_nonzero,
cumsum/cumprod/cummax/cummin/logcumsumexp, unique, bincount, histc."""

from __future__ import annotations

import cmath
import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import const, excluding, same
from .reductions import REDUCE, _reducer, _samples

_NAN_ROWS = [[1.0, math.nan, 2.0, -3.0], [0.5, -1.0, 3.0, 3.0], [math.nan, math.nan, math.nan, math.nan]]


def _axis(x: np.ndarray, dim):
    if dim is None or dim == () or x.ndim == 0:
        return None
    return dim


def _with_nans(samples, *extra, **kwargs):
    def more(dtype: str) -> list[Sample]:
        out = list(samples(dtype))
        if P.category(dtype) == 2:
            out.append(Sample((Arg((3, 4), dtype, values=_NAN_ROWS), *extra), dict(kwargs), note="NaN"))
        return out
    return more


def _accumulated(sample: Sample) -> str:
    if "dtype" in sample.kwargs:
        return sample.kwargs["dtype"].name
    d = same(sample)
    return "int64" if P.category(d) <= 1 else d


def _nanmean_ref(x, dim=None, keepdim=False, dtype=None):
    return _reducer(np.nanmean)(x, dim, keepdim)


# -- var / std -----------------------------------------------------------------------

def _moment_samples(dtype: str) -> list[Sample]:
    out = []
    for shape, layout, dim, keepdim in REDUCE:
        out.append(Sample((Arg(shape, dtype, layout), dim), {"keepdim": keepdim}))
    out.append(Sample((Arg((3, 4), dtype, "transposed"), 1), {"correction": 0}))
    out.append(Sample((Arg((2, 3, 4), dtype), (0, 2)), {"correction": 2, "keepdim": True}))
    out.append(Sample((Arg((5,), dtype),), {"correction": 0.5}))
    return out


def _var_ref(x, dim=None, correction=None, keepdim=False):
    ddof = 1 if correction is None else correction
    if x.ndim == 0:
        return np.var(x.reshape(1), ddof=ddof).reshape(())
    return np.var(x, axis=_axis(x, dim), ddof=ddof, keepdims=keepdim)


def _std_ref(x, dim=None, correction=None, keepdim=False):
    return np.sqrt(_var_ref(x, dim, correction, keepdim))


def _mean_ref(x, dim=None, keepdim=False):
    return _reducer(np.mean)(x, dim, keepdim)


def _moment_dtype(sample: Sample) -> str:
    return P.to_real(same(sample))


def _moment_errors(name: str):
    def errors():
        yield ErrorCase((Arg((3,), "int64"),), RuntimeError, "std and var only support floating point and complex")
        yield ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")
    return errors


# -- aminmax, median, mode -------------------------------------------------------------

def _aminmax_samples(dtype: str) -> list[Sample]:
    out = []
    for shape, layout, dim, keepdim in REDUCE:
        if isinstance(dim, tuple) or 0 in shape:
            continue
        out.append(Sample((Arg(shape, dtype, layout),), {"dim": dim, "keepdim": keepdim}))
    return out


def _aminmax_ref(x, dim=None, keepdim=False):
    return _reducer(np.amin)(x, dim, keepdim), _reducer(np.amax)(x, dim, keepdim)


def _global_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((), dtype),)), Sample((Arg((5,), dtype, "sliced"),)),
            Sample((Arg((3, 4), dtype, "transposed"),)),
            Sample((Arg((2, 3, 4), dtype),))]


def _lower_median(values: np.ndarray) -> np.ndarray:
    flat = np.sort(values.reshape(-1), kind="stable")
    if flat.size == 0:
        return np.array(np.nan)
    return flat[(flat.size - 1) // 2]


def _median_ref(x):
    if np.issubdtype(x.dtype, np.floating) and np.isnan(x).any():
        return np.array(np.nan)
    return _lower_median(x)


def _nanmedian_ref(x):
    flat = x.reshape(-1)
    if np.issubdtype(x.dtype, np.floating):
        flat = flat[~np.isnan(flat)]
    return _lower_median(flat)


def _dim_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((), dtype), 0)),
        Sample((Arg((5,), dtype, "sliced"), 0)),
        Sample((Arg((3, 4), dtype, "transposed"), 1)),
        Sample((Arg((3, 4), dtype), 0, True)),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -2)),
        Sample((Arg((2, 3, 4), dtype, low=-2, high=2), -1, True), note="ties"),
    ]


def _ranked(pick):
    """A reference for (values, indices) of the element at rank ``pick(row)`` of each stable-sorted row."""
    def ref(x, dim=-1, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        rows = np.moveaxis(x, dim, -1)
        flat = rows.reshape(-1, rows.shape[-1])
        values = np.empty(flat.shape[0], x.dtype)
        index = np.empty(flat.shape[0], np.int64)
        for r, row in enumerate(flat):
            index[r] = pick(row)
            values[r] = row[index[r]]
        values, index = values.reshape(rows.shape[:-1]), index.reshape(rows.shape[:-1])
        if keepdim:
            values, index = np.expand_dims(values, dim), np.expand_dims(index, dim)
        return values, index
    return ref


def _isnan(row):
    return np.isnan(row) if np.issubdtype(row.dtype, np.floating) else np.zeros(row.shape, bool)


def _median_pick(row):
    nan = _isnan(row)
    if nan.any():
        return int(np.argmax(nan))
    return int(np.argsort(row, kind="stable")[(row.size - 1) // 2])


def _nanmedian_pick(row):
    count = int((~_isnan(row)).sum())
    return int(np.argsort(row, kind="stable")[max(count - 1, 0) // 2])


def _mode_pick(row):
    values, counts = np.unique(row, return_counts=True)
    best = values[np.argmax(counts)]
    return int(np.flatnonzero(row == best)[-1])


def _values_indices(sample: Sample):
    return same(sample), "int64"


def _median_dim_errors(name: str):
    def errors():
        yield ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")
        yield ErrorCase((Arg((0, 3), "float32"), 0), IndexError,
                        f"{name}(): Expected reduction dim 0 to have non-zero size")
    return errors


# -- quantile --------------------------------------------------------------------------

def _quantile_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((7,), dtype), 0.3)),
        Sample((Arg((3, 4), dtype, "transposed"), 0.5, 1)),
        Sample((Arg((3, 4), dtype), Arg((3,), dtype, values=[0.0, 0.25, 1.0]), 0, True)),
        Sample((Arg((2, 3, 4), dtype, "sliced"), Arg((), dtype, values=0.75), -1)),
        Sample((Arg((3, 5), dtype), 0.4, 1), {"interpolation": "lower"}),
        Sample((Arg((3, 5), dtype), 0.4, 1), {"interpolation": "higher"}),
        Sample((Arg((3, 5), dtype), 0.4, 1), {"interpolation": "midpoint"}),
        Sample((Arg((3, 5), dtype), 0.3, 1), {"interpolation": "nearest"}),
        Sample((Arg((3, 4), dtype), 0.6, None, True)),
        Sample((Arg((3, 4), dtype, values=_NAN_ROWS), 0.5, 1), note="NaN"),
    ]


def _quantile_ref(reduce):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        axis = None if dim is None or x.ndim == 0 else dim
        return reduce(x, np.asarray(q, np.float64), axis=axis, keepdims=keepdim, method=interpolation)
    return ref


def _quantile_errors(name: str):
    def errors():
        yield ErrorCase((Arg((3,), "int64"), 0.5), RuntimeError,
                        f"{name}() input tensor must be either float or double")
        yield ErrorCase((Arg((3,), "float32"), 1.5), RuntimeError, f"{name}() q must be in the range [0, 1]")
        yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float64")), RuntimeError,
                        f"{name}() q tensor must be same dtype as the input tensor")
        yield ErrorCase((Arg((3,), "float32"), 0.5), RuntimeError, f"{name}() interpolation must be one of linear",
                        kwargs={"interpolation": "cubic"})
    return errors


# -- logsumexp, norm, dist, count_nonzero ------------------------------------------------

def _logsumexp_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg(shape, dtype, layout), dim, keepdim)) for shape, layout, dim, keepdim in REDUCE
           if dim is not None]
    if P.category(dtype) == 2:
        out.append(Sample((Arg((2, 2), dtype, values=[[-math.inf, -math.inf], [1.0, math.inf]]), 1), note="inf"))
    return out


def _logsumexp_ref(x, dim, keepdim=False):
    axis = _axis(x, dim)
    x = x.astype(np.float64)
    if x.ndim == 0:
        return x
    with np.errstate(all="ignore"):
        top = np.amax(x, axis=axis, keepdims=True) if x.size else np.zeros(())
        top = np.where(np.isfinite(top), top, 0)
        result = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    if not keepdim:
        result = result.squeeze(axis) if axis is not None else result.reshape(())
    return result


def _logsumexp_dtype(sample: Sample) -> str:
    return P.to_float(same(sample))


def _norm_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((5,), dtype, "sliced"),)),
        Sample((Arg((3, 4), dtype, "transposed"), 1)),
        Sample((Arg((3, 4), dtype), 3, 1, True)),
        Sample((Arg((2, 3, 4), dtype), math.inf, (0, 2))),
        Sample((Arg((2, 3, 4), dtype), -math.inf, -1)),
        Sample((Arg((3, 4), dtype), 0, 0)),
        Sample((Arg((3, 4), dtype), 1.5)),
        Sample((Arg((3, 4), dtype), "fro", (0, 1))),
        Sample((Arg((3, 4), dtype), "nuc")),
        Sample((Arg((), dtype),)),
    ]


def _norm_ref(x, p="fro", dim=None, keepdim=False, dtype=None):
    axis = _axis(x, dim)
    if p == "nuc":
        return np.linalg.norm(x, "nuc", keepdims=keepdim)
    a = np.abs(x)
    if p == "fro" or p == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    if p == math.inf:
        return np.amax(a, axis=axis, keepdims=keepdim)
    if p == -math.inf:
        return np.amin(a, axis=axis, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
    return np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


def _norm_errors():
    yield ErrorCase((Arg((3,), "int64"),), RuntimeError, "Expected a floating point or complex tensor as input")
    yield ErrorCase((Arg((3, 4, 5), "float32"), "nuc"), RuntimeError, "dim must be a 2-tuple")


def _dist_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), Arg((3, 4), dtype, "transposed"))),
        Sample((Arg((3, 4), dtype), Arg((4,), dtype), 1)),
        Sample((Arg((2, 1), dtype), Arg((3,), dtype, "sliced"), math.inf)),
        Sample((Arg((3,), dtype), Arg((3,), dtype), 0.5)),
    ]


def _dist_ref(x, y, p=2):
    return _norm_ref(x - y, p if p != 2 else "fro")


def _count_nonzero_ref(x, dim=None):
    axis = _axis(x, dim)
    return np.asarray(np.count_nonzero(x, axis=axis if axis is None or isinstance(axis, int) else tuple(axis)))


def _count_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout, low=-1, high=1), dim)) for shape, layout, dim, _ in REDUCE]


# -- cumulative ops -----------------------------------------------------------------------

def _scan_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((), dtype), 0)),
        Sample((Arg((0,), dtype), 0)),
        Sample((Arg((6,), dtype, "sliced", low=-2, high=2), 0)),
        Sample((Arg((3, 4), dtype, "transposed", low=-2, high=2), 1)),
        Sample((Arg((3, 4), dtype, low=-2, high=2), 0)),
        Sample((Arg((2, 3, 4), dtype, low=-2, high=2), -1)),
    ]
    if P.category(dtype) >= 2:
        out.append(Sample((Arg((3, 4), dtype, low=-2, high=2), 1), {"dtype": _fb("float64" if P.category(dtype) == 2
                                                                                   else "complex128")}))
    return out


def _fb(name: str):
    import flambeau

    return getattr(flambeau, name)


def _scan_ref(ufunc):
    def ref(x, dim, dtype=None):
        if x.ndim == 0:
            return x.copy()
        work = x.astype(np.int64) if x.dtype.kind in "biu" else x
        return ufunc.accumulate(work, axis=dim)
    return ref


def _cum_extreme_ref(better):
    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        rows = np.moveaxis(x, dim, -1)
        values, index = np.empty_like(rows), np.empty(rows.shape, np.int64)
        for pos in np.ndindex(rows.shape[:-1]):
            row = rows[pos]
            if row.size == 0:
                continue
            best, at = row[0], 0
            for i, v in enumerate(row):
                # PyTorch's scan: a NaN always takes over; nothing takes over from a NaN.
                if _isnan(np.array([v]))[0] or (not _isnan(np.array([best]))[0] and better(v, best)):
                    best, at = v, i
                values[pos + (i,)] = best
                index[pos + (i,)] = at
        return np.moveaxis(values, -1, dim), np.moveaxis(index, -1, dim)
    return ref


def _cum_samples(dtype: str) -> list[Sample]:
    out = [s for s in _scan_samples(dtype) if "dtype" not in s.kwargs]
    if P.category(dtype) == 2:
        out.append(Sample((Arg((3, 4), dtype, values=_NAN_ROWS), 1), note="NaN"))
    return out


def _logcumsumexp_ref(x, dim):
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind == "c":
        return np.apply_along_axis(_logcumsumexp_complex_row, dim, x)
    return np.logaddexp.accumulate(x, axis=dim)


def _log_add_exp_complex(a: complex, b: complex) -> complex:
    # PyTorch's recurrence: the operand with the larger real part (b on a tie) plus
    # log(1 + e^(smaller - larger)); its imaginary part is not wrapped into (-pi, pi].
    lo, hi = (b, a) if a.real > b.real else (a, b)
    if cmath.isnan(lo) or cmath.isnan(hi):
        return complex(math.nan, math.nan)
    if math.isinf(lo.real) and lo.real == hi.real:
        return complex(-math.inf, 0.0) if lo.real < 0 else cmath.log(cmath.exp(lo) + cmath.exp(hi))
    w = cmath.exp(lo - hi)
    return hi + complex(0.5 * math.log1p(2 * w.real + abs(w) ** 2), math.atan2(w.imag, 1 + w.real))


def _logcumsumexp_complex_row(row: np.ndarray) -> np.ndarray:
    out, acc = np.empty_like(row), complex(-math.inf, 0.0)
    for i, v in enumerate(row):
        acc = out[i] = _log_add_exp_complex(acc, complex(v))
    return out


# -- unique, bincount, histc ------------------------------------------------------------

def _unique_samples(dtype: str) -> list[Sample]:
    small = {"low": -2, "high": 2}
    return [
        Sample((Arg((6,), dtype, **small),), data_dependent=True),
        Sample((Arg((3, 4), dtype, "transposed", **small), True, True, True), data_dependent=True),
        Sample((Arg((3, 4), dtype, **small),), {"return_counts": True}, data_dependent=True),
        Sample((Arg((4, 2), dtype, low=-1, high=1),), {"dim": 0, "return_inverse": True, "return_counts": True},
               data_dependent=True),
        Sample((Arg((0,), dtype),), {"return_inverse": True}, data_dependent=True),
    ]


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
    else:
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    out = [values]
    if return_inverse:
        out.append(inverse.astype(np.int64))
    if return_counts:
        out.append(counts.astype(np.int64))
    return tuple(out) if len(out) > 1 else values


def _unique_dtypes(sample: Sample):
    kw = dict(zip(("sorted", "return_inverse", "return_counts", "dim"), sample.args[1:]))
    kw.update(sample.kwargs)
    return (same(sample),) + ("int64",) * (bool(kw.get("return_inverse")) + bool(kw.get("return_counts")))


def _unique_consecutive_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((8,), dtype, low=-1, high=1),), data_dependent=True),
        Sample((Arg((3, 4), dtype, "transposed", low=0, high=1), True, True), data_dependent=True),
        Sample((Arg((5, 2), dtype, values=[[1, 0], [1, 0], [0, 1], [1, 0], [1, 0]]),),
               {"dim": 0, "return_counts": True},
               data_dependent=True),
    ]


def _unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    moved = x.reshape(-1, 1) if dim is None else np.moveaxis(x, dim, 0).reshape(x.shape[dim], -1)
    n = moved.shape[0]
    starts = np.ones(n, bool)
    starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    values = x.reshape(-1)[starts] if dim is None else np.moveaxis(np.moveaxis(x, dim, 0)[starts], 0, dim)
    inverse = (np.cumsum(starts) - 1).reshape(x.shape if dim is None else (n,))
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return tuple(out) if len(out) > 1 else values


def _unique_consecutive_dtypes(sample: Sample):
    kw = dict(zip(("return_inverse", "return_counts", "dim"), sample.args[1:]))
    kw.update(sample.kwargs)
    return (same(sample),) + ("int64",) * (bool(kw.get("return_inverse")) + bool(kw.get("return_counts")))


def _bincount_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((10,), dtype, low=0, high=5),), data_dependent=True),
        Sample((Arg((6,), dtype, "sliced", low=0, high=3), Arg((6,), "float32")), data_dependent=True),
        Sample((Arg((6,), dtype, low=0, high=3), Arg((6,), "float64"), 8), data_dependent=True),
        Sample((Arg((4,), dtype, low=0, high=3), Arg((4,), "int32")), {"minlength": 2}, data_dependent=True),
        Sample((Arg((0,), dtype),), data_dependent=True),
    ]


def _bincount_ref(x, weights=None, minlength=0):
    return np.bincount(x.astype(np.int64), weights=weights, minlength=minlength)


def _bincount_dtype(sample: Sample) -> str:
    weights = sample.args[1] if len(sample.args) > 1 else None
    if weights is None:
        return "int64"
    return weights.dtype if weights.dtype in ("float32", "float64") else "float64"


def _bincount_errors():
    # bincount is dynamic: a backend that computes no data has no kernel, so never reaches these checks.
    yield ErrorCase((Arg((2, 2), "int64", low=0),), RuntimeError, "bincount only supports 1-d non-negative integral",
                    data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"),), RuntimeError, "bincount only supports 1-d non-negative integral",
                    data_dependent=True)
    yield ErrorCase((Arg((3,), "int64", low=0), Arg((2,), "float32")), RuntimeError,
                    "weights should be 1-d and have the same length as input", data_dependent=True)
    yield ErrorCase((Arg((3,), "int64", low=-3, high=-1),), RuntimeError, "bincount only supports 1-d non-negative",
                    data_dependent=True)


def _histc_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((20,), dtype),)),
        Sample((Arg((3, 4), dtype, "transposed"), 5, -1.0, 1.0)),
        Sample((Arg((6,), dtype, "sliced"), 4)),
        Sample((Arg((6,), dtype, values=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), 3), note="constant"),
    ]


def _histc_ref(x, bins=100, min=0, max=0):
    data = x.reshape(-1).astype(np.float64)
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    return np.histogram(data, bins=bins, range=(low, high))[0]


def _histc_errors():
    yield ErrorCase((Arg((3,), "int64"),), RuntimeError, '"histogram_cpu" not implemented for \'Long\'')
    yield ErrorCase((Arg((3,), "float32"), 0), RuntimeError, "bins must be > 0")
    yield ErrorCase((Arg((3,), "float32"), 4, 2.0, 1.0), RuntimeError, "max must be larger than min")


def cases() -> list[OpCase]:
    real_nonbool = excluding(P.REAL, "bool")
    loose = {"float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}
    return [
        OpCase("nansum", P.REAL, _with_nans(_samples(low=-3, high=3), 1), _reducer(np.nansum), _accumulated,
               tolerances=loose),
        OpCase("nanmean", P.FLOATS + P.COMPLEX, _with_nans(_samples(), 1), _nanmean_ref, same, tolerances=loose,
               errors=lambda: [ErrorCase((Arg((2,), "int64"),), RuntimeError, "nanmean(): expected input to have "
                                         "floating point or complex dtype but got Long")]),
        OpCase("var", P.FLOATS + P.COMPLEX, _moment_samples, _var_ref, _moment_dtype, errors=_moment_errors("var"),
               tolerances=loose),
        OpCase("std", P.FLOATS + P.COMPLEX, _moment_samples, _std_ref, _moment_dtype, errors=_moment_errors("std"),
               tolerances=loose),
        OpCase("var_mean", P.FLOATS, _moment_samples,
               lambda x, dim=None, correction=None, keepdim=False: (_var_ref(x, dim, correction, keepdim),
                                                                    _mean_ref(x, dim, keepdim)),
               lambda s: (same(s), same(s)), tolerances=loose, errors=_moment_errors("var_mean")),
        OpCase("std_mean", P.FLOATS, _moment_samples,
               lambda x, dim=None, correction=None, keepdim=False: (_std_ref(x, dim, correction, keepdim),
                                                                    _mean_ref(x, dim, keepdim)),
               lambda s: (same(s), same(s)), tolerances=loose, errors=_moment_errors("std_mean")),
        OpCase("aminmax", P.REAL, _with_nans(_aminmax_samples), _aminmax_ref, lambda s: (same(s), same(s)),
               errors=lambda: [ErrorCase((Arg((0, 3), "float32"),), RuntimeError,
                                         "aminmax(): Expected reduction dim to be specified for input.numel() == 0")]),
        OpCase("median", P.REAL, _with_nans(_global_samples), _median_ref, same),
        OpCase("nanmedian", P.REAL, _with_nans(_global_samples), _nanmedian_ref, same),
        OpCase("median_dim", real_nonbool, _with_nans(_dim_samples, 1), _ranked(_median_pick), _values_indices,
               errors=_median_dim_errors("median")),
        OpCase("nanmedian_dim", real_nonbool, _with_nans(_dim_samples, 1), _ranked(_nanmedian_pick), _values_indices,
               errors=_median_dim_errors("nanmedian")),
        OpCase("mode", real_nonbool, _dim_samples, _ranked(_mode_pick), _values_indices,
               errors=_median_dim_errors("mode")),
        OpCase("quantile", ("float32", "float64"), _quantile_samples, _quantile_ref(np.quantile), same,
               errors=_quantile_errors("quantile")),
        OpCase("nanquantile", ("float32", "float64"), _quantile_samples, _quantile_ref(np.nanquantile), same,
               errors=_quantile_errors("nanquantile")),
        OpCase("logsumexp", P.REAL, _logsumexp_samples, _logsumexp_ref, _logsumexp_dtype, tolerances=loose),
        OpCase("norm", P.FLOATS + P.COMPLEX, _norm_samples, _norm_ref, _moment_dtype, errors=_norm_errors,
               tolerances=loose),
        OpCase("dist", P.FLOATS, _dist_samples, _dist_ref, same, tolerances=loose),
        OpCase("count_nonzero", P.ALL, _count_samples, _count_nonzero_ref, const("int64")),
        OpCase("cumsum", P.ALL, _scan_samples, _scan_ref(np.add), _accumulated, tolerances=loose,
               errors=lambda: [ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")]),
        OpCase("cumprod", P.ALL, _scan_samples, _scan_ref(np.multiply), _accumulated, tolerances=loose,
               errors=lambda: [ErrorCase((Arg((2, 3), "float32"), -3), IndexError, "Dimension out of range")]),
        OpCase("cummax", P.REAL, _cum_samples, _cum_extreme_ref(lambda v, b: v >= b), _values_indices),
        OpCase("cummin", P.REAL, _cum_samples, _cum_extreme_ref(lambda v, b: v <= b), _values_indices),
        OpCase("logcumsumexp", P.FLOATS + P.COMPLEX, _cum_samples, _logcumsumexp_ref, same, tolerances=loose,
               errors=lambda: [ErrorCase((Arg((3,), "int64"), 0), RuntimeError, "not implemented for 'Long'")]),
        OpCase("unique", P.REAL, _unique_samples, _unique_ref, _unique_dtypes),
        OpCase("unique_consecutive", P.REAL, _unique_consecutive_samples, _unique_consecutive_ref,
               _unique_consecutive_dtypes),
        OpCase("bincount", P.INTS, _bincount_samples, _bincount_ref, _bincount_dtype, errors=_bincount_errors),
        OpCase("histc", ("float32", "float64"), _histc_samples, _histc_ref, same, errors=_histc_errors),
    ]

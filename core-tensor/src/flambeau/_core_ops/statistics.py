"""Declarations of the statistical and cumulative reductions.

nansum/nanmean, var/std (and their ``_mean`` pairs), aminmax, median/nanmedian, mode,
quantile/nanquantile, logsumexp, norm, dist, count_nonzero, the cumulative ops, unique,
bincount and histc. The overloaded Python forms (``var(x, unbiased)``, ``median(x, dim)``)
live in :mod:`flambeau._api_statistics`.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ._docs_statistics import DOCS
from ..ops.meta import (broadcast, reduced_shape, reduction_dims, reduction_shape, type_name, wrap_dim,
                        wrap_dim_of_dims)
from .reductions import _check_nonempty

_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _accumulate_dtype(input: Tensor, dtype: Any) -> _dtypes.dtype:
    if dtype is not None:
        return dtype
    return _dtypes.int64 if input._dtype._category <= _dtypes._INT else input._dtype


def _nansum_meta(input: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    if input._dtype.is_complex:
        raise RuntimeError("nansum does not support complex inputs")
    return reduction_shape(input, dim, keepdim), _accumulate_dtype(input, dtype)


def _nanmean_meta(input: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    out = dtype or input._dtype
    if out._category < _dtypes._FLOAT:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got " + type_name(input._dtype))
    return reduction_shape(input, dim, keepdim), out


def _moment_dtype(input: Tensor) -> _dtypes.dtype:
    if input._dtype._category < _dtypes._FLOAT:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return input._dtype.to_real() if input._dtype.is_complex else input._dtype


def _var_meta(input: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple:
    out = _moment_dtype(input)
    if correction is not None and not isinstance(correction, (int, float)):
        raise TypeError(f"var(): argument 'correction' must be Number, not {type(correction).__name__}")
    return reduction_shape(input, dim, keepdim), out


def _var_mean_meta(input: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> list:
    shape, out = _var_meta(input, dim, correction, keepdim)
    return [(shape, out), (shape, input._dtype)]


def _aminmax_meta(input: Tensor, dim: Any = None, keepdim: bool = False) -> list:
    if input._dtype.is_complex:
        raise RuntimeError("aminmax(): does not support complex input")
    if dim is None:
        _check_nonempty("aminmax", input, None)
        shape = reduced_shape(input._data.shape, None, keepdim)
    else:
        d = wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input._data.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        shape = reduced_shape(input._data.shape, (d,) if input._data.ndim else None, keepdim)
    return [(shape, input._dtype), (shape, input._dtype)]


def _real_only(name: str, input: Tensor) -> None:
    if input._dtype.is_complex:
        raise RuntimeError(f'"{name}" not implemented for \'{type_name(input._dtype)}\'')


def _median_meta(name: str):
    def meta(input: Tensor) -> tuple:
        _real_only(name + "_cpu", input)
        return (), input._dtype
    return meta


def _median_dim_meta(name: str):
    def meta(input: Tensor, dim: int = -1, keepdim: bool = False) -> list:
        _real_only(name + "_cpu", input)
        d = wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input._data.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size.")
        shape = reduced_shape(input._data.shape, (d,) if input._data.ndim else None, keepdim)
        return [(shape, input._dtype), (shape, _dtypes.int64)]
    return meta


def _quantile_meta(name: str):
    def meta(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, interpolation: str = "linear") -> tuple:
        if input._dtype not in (_dtypes.float32, _dtypes.float64):
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        if isinstance(q, Tensor):
            if q._data.ndim > 1:
                raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
            if q._dtype is not input._dtype:
                raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        elif isinstance(q, (int, float)) and not isinstance(q, bool):
            if not 0 <= q <= 1:
                raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        else:
            raise TypeError(f"{name}(): argument 'q' must be float or Tensor, not {type(q).__name__}")
        if interpolation not in _QUANTILE_MODES:
            raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                               f"Got {interpolation}")
        if input.numel() == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        if dim is None:
            shape = reduced_shape(input._data.shape, None, keepdim)
        else:
            d = wrap_dim(dim, input._data.ndim)
            shape = reduced_shape(input._data.shape, (d,) if input._data.ndim else None, keepdim)
        if isinstance(q, Tensor) and q._data.ndim == 1:
            shape = (q._data.shape[0], *shape)
        return shape, input._dtype
    return meta


def _logsumexp_meta(input: Tensor, dim: Any, keepdim: bool = False) -> tuple:
    out = input._dtype if input._dtype._category >= _dtypes._FLOAT else _dtypes.get_default_dtype()
    return reduction_shape(input, dim, keepdim), out


def _norm_meta(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> tuple:
    if input._dtype._category < _dtypes._FLOAT:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           + type_name(input._dtype))
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"norm(): unsupported norm type {p!r}; expected a number, 'fro' or 'nuc'")
        if p == "nuc":
            dims = reduction_dims(input, dim) if dim is not None else tuple(range(input._data.ndim))
            if dims is None or len(dims) != 2:
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   + " ".join(str(d) for d in (dims or ())))
    elif p is not None and (not isinstance(p, (int, float)) or isinstance(p, bool)):
        raise TypeError(f"norm(): argument 'p' must be Number or str, not {type(p).__name__}")
    dims = reduction_dims(input, dim)
    out = dtype if dtype is not None else input._dtype
    if out.is_complex:
        out = out.to_real()
    return reduced_shape(input._data.shape, dims, keepdim), out


def _dist_meta(input: Tensor, other: Tensor, p: Any = 2) -> tuple:
    if input._dtype._category < _dtypes._FLOAT or other._dtype._category < _dtypes._FLOAT:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           + type_name(input._dtype if input._dtype._category < _dtypes._FLOAT else other._dtype))
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dist(): input type ({type_name(input._dtype)}) and other type "
                           f"({type_name(other._dtype)}) must be the same")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' must be Number, not {type(p).__name__}")
    broadcast(input, other)
    return (), input._dtype.to_real() if input._dtype.is_complex else input._dtype


def _count_nonzero_meta(input: Tensor, dim: Any = None) -> tuple:
    dims = reduction_dims(input, dim)
    return reduced_shape(input._data.shape, dims, False), _dtypes.int64


def _cumulative_meta(name: str):
    def meta(input: Tensor, dim: int, dtype: Any = None) -> tuple:
        wrap_dim(dim, input._data.ndim)
        return input._data.shape, _accumulate_dtype(input, dtype)
    return meta


def _cum_extreme_meta(name: str):
    def meta(input: Tensor, dim: int) -> list:
        _real_only(name + "_cpu", input)
        wrap_dim(dim, input._data.ndim)
        return [(input._data.shape, input._dtype), (input._data.shape, _dtypes.int64)]
    return meta


def _logcumsumexp_meta(input: Tensor, dim: int) -> tuple:
    if input._dtype._category < _dtypes._FLOAT:
        raise RuntimeError(f'"logcumsumexp_out_cpu" not implemented for \'{type_name(input._dtype)}\'')
    wrap_dim(dim, input._data.ndim)
    return input._data.shape, input._dtype


def _unique_meta(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
                 dim: Any = None) -> None:
    if input._dtype.is_complex:
        raise RuntimeError(f'"unique_cpu" not implemented for \'{type_name(input._dtype)}\'')
    if dim is not None:
        d = wrap_dim_of_dims(dim, input._data.ndim)
        shape = input._data.shape
        # PyTorch's rules for empty inputs along a dim: the selected dim may be the one empty dim (the
        # results are empty); any other empty dim leaves nothing to compare slices by.
        if shape and shape[d] == 0:
            if sum(1 for n in shape if n == 0) > 1:
                raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        elif 0 in shape:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")


def _unique_consecutive_meta(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                             dim: Any = None) -> None:
    _unique_meta(input, True, return_inverse, return_counts, dim)


def _bincount_meta(input: Tensor, weights: Any = None, minlength: int = 0) -> None:
    if input._data.ndim != 1 or input._dtype._category != _dtypes._INT:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if not isinstance(minlength, int) or minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != input._data.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")


def _histc_meta(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> tuple:
    if input._dtype._category != _dtypes._FLOAT:
        raise RuntimeError(f'"histogram_cpu" not implemented for \'{type_name(input._dtype)}\'')
    if not isinstance(bins, int) or bins <= 0:
        raise RuntimeError("flambeau.histc(): bins must be > 0, but got " + str(bins) + " for bins")
    if min > max:
        raise RuntimeError("flambeau.histc(): max must be larger than min")
    return (bins,), input._dtype


_VAR_SIG = "(input: Tensor, dim=None, *, correction=None, keepdim=False)"
_QUANTILE_SIG = "(input: Tensor, q: TensorOrScalar, dim=None, keepdim=False, *, interpolation='linear')"


def declarations() -> list[OpDecl]:
    decls = [
        OpDecl("nansum", "(input: Tensor, dim=None, keepdim=False, *, dtype=None)", _nansum_meta,
               doc="The sum of all elements, or along ``dim``, treating NaN as zero."),
        OpDecl("nanmean", "(input: Tensor, dim=None, keepdim=False, *, dtype=None)", _nanmean_meta,
               doc="The mean of the non-NaN elements, or along ``dim``."),
        OpDecl("var", _VAR_SIG, _var_meta,
               doc="The variance over ``dim`` with ``correction`` (Bessel's, 1, by default) subtracted from N."),
        OpDecl("std", _VAR_SIG, _var_meta,
               doc="The standard deviation over ``dim`` with ``correction`` (1 by default)."),
        # Functions only: PyTorch has no Tensor.var_mean / Tensor.std_mean.
        OpDecl("var_mean", _VAR_SIG, _var_mean_meta, method=False, doc="``(var, mean)`` over ``dim``."),
        OpDecl("std_mean", _VAR_SIG, _var_mean_meta, method=False, doc="``(std, mean)`` over ``dim``."),
        OpDecl("aminmax", "(input: Tensor, *, dim=None, keepdim=False)", _aminmax_meta, output_names=("min", "max"),
               doc="The minimum and maximum of all elements, or along ``dim``."),
        OpDecl("median", "(input: Tensor)", _median_meta("median"), method=False, export=False,
               doc="The median of all elements (the lower of the two middle values for an even count)."),
        OpDecl("median_dim", "(input: Tensor, dim=-1, keepdim=False)", _median_dim_meta("median"), method=False,
               export=False, output_names=("values", "indices"), doc="Medians along ``dim`` and their indices."),
        OpDecl("nanmedian", "(input: Tensor)", _median_meta("nanmedian"), method=False, export=False,
               doc="The median of the non-NaN elements."),
        OpDecl("nanmedian_dim", "(input: Tensor, dim=-1, keepdim=False)", _median_dim_meta("nanmedian"),
               method=False, export=False, output_names=("values", "indices"),
               doc="Medians of the non-NaN elements along ``dim`` and their indices."),
        OpDecl("mode", "(input: Tensor, dim=-1, keepdim=False)", _median_dim_meta("mode"),
               output_names=("values", "indices"),
               doc="The most frequent value along ``dim`` (the smallest of equally frequent ones) and its index."),
        OpDecl("quantile", _QUANTILE_SIG, _quantile_meta("quantile"),
               doc="The ``q``-th quantiles of all elements, or along ``dim``, interpolated as ``interpolation`` says."),
        OpDecl("nanquantile", _QUANTILE_SIG, _quantile_meta("nanquantile"),
               doc="As :func:`quantile`, ignoring NaN."),
        OpDecl("logsumexp", "(input: Tensor, dim, keepdim=False)", _logsumexp_meta,
               doc="``log(sum(exp(input), dim))``, computed without overflow."),
        OpDecl("norm", "(input: Tensor, p='fro', dim=None, keepdim=False, dtype=None)", _norm_meta,
               doc="The vector p-norm over ``dim`` (all elements by default), 'fro' or the nuclear norm 'nuc'."),
        OpDecl("dist", "(input: Tensor, other: Tensor, p=2)", _dist_meta, doc="``norm(input - other, p)``."),
        OpDecl("count_nonzero", "(input: Tensor, dim=None)", _count_nonzero_meta, differentiable=False,
               doc="The number of non-zero elements, in all or along ``dim`` (an int or a tuple)."),
        OpDecl("cumsum", "(input: Tensor, dim, *, dtype=None)", _cumulative_meta("cumsum"), inplace=True,
               doc="Cumulative sums along ``dim``; integral inputs give int64."),
        OpDecl("cumprod", "(input: Tensor, dim, *, dtype=None)", _cumulative_meta("cumprod"), inplace=True,
               doc="Cumulative products along ``dim``; integral inputs give int64."),
        OpDecl("cummax", "(input: Tensor, dim)", _cum_extreme_meta("cummax"), output_names=("values", "indices"),
               doc="Running maxima along ``dim`` and where each was found (NaN propagates)."),
        OpDecl("cummin", "(input: Tensor, dim)", _cum_extreme_meta("cummin"), output_names=("values", "indices"),
               doc="Running minima along ``dim`` and where each was found (NaN propagates)."),
        OpDecl("logcumsumexp", "(input: Tensor, dim)", _logcumsumexp_meta,
               doc="``log(cumsum(exp(input), dim))``, computed without overflow."),
        OpDecl("unique", "(input: Tensor, sorted=True, return_inverse=False, return_counts=False, dim=None)",
               _unique_meta, kind="dynamic", differentiable=False,
               doc="The distinct elements (or slices along ``dim``), with the inverse indices and counts if asked."),
        OpDecl("unique_consecutive", "(input: Tensor, return_inverse=False, return_counts=False, dim=None)",
               _unique_consecutive_meta, kind="dynamic", differentiable=False,
               doc="Collapses each run of equal consecutive elements (or slices along ``dim``) to one."),
        OpDecl("bincount", "(input: Tensor, weights: Tensor? = None, minlength=0)", _bincount_meta, kind="dynamic",
               differentiable=False, doc="How often each non-negative integer occurs (weighted if ``weights``)."),
        OpDecl("histc", "(input: Tensor, bins=100, min=0, max=0)", _histc_meta, differentiable=False,
               doc="A histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0)."),
    ]
    for decl in decls:  # the full docstrings (Args, Example) where written
        decl.doc = DOCS.get(decl.name, decl.doc)
    return decls

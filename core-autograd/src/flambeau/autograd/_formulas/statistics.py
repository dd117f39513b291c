"""Backward formulas of the statistical and cumulative reductions."""
from __future__ import annotations

import math

from ..formula import Formula
from ._helpers import conj, reduction_dims, unsqueeze_dims
from ._scatter import restore_dim, scatter_along, scatter_values, take_along


def _fb():
    import flambeau

    return flambeau


def _zero(g):
    return _fb().zeros((), dtype=g._dtype, device=g._device)


def _back(ctx, g, dim, keepdim):
    """``g`` with the reduced dims put back (it broadcasts against the input), and those dims."""
    shape = ctx.shape(0)
    dims = reduction_dims(dim, len(shape))
    return unsqueeze_dims(g, dims, len(shape), keepdim), dims


def _count(shape, dims) -> int:
    return math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)


def _sum_keep(t, dims):
    return t.sum(dims, keepdim=True) if dims is not None else t.sum()


# -- nansum / nanmean ----------------------------------------------------------------------

def _nansum(ctx, g):
    x, dim, keepdim, _dtype = ctx.args
    g, _ = _back(ctx, g, dim, keepdim)
    return _fb().where(x.isnan(), _zero(g), g)


def _nanmean(ctx, g):
    x, dim, keepdim, _dtype = ctx.args
    g, dims = _back(ctx, g, dim, keepdim)
    valid = x.isnan().logical_not()
    count = _sum_keep(valid.to(g._dtype), dims)
    return _fb().where(valid, g / count, _zero(g))


# -- var / std ------------------------------------------------------------------------------

def _centered(x, dims):
    return x - (x.mean(dims, keepdim=True) if dims is not None else x.mean())


def _divisor(ctx, dims, correction) -> float:
    return _count(ctx.shape(0), dims) - (1 if correction is None else correction)


def _var_part(ctx, x, g, dims, correction):
    return g * 2.0 * _centered(x, dims) / _divisor(ctx, dims, correction)


def _std_part(ctx, x, g, std, dims, correction):
    fb = _fb()
    scaled = g * _centered(x, dims) / (_divisor(ctx, dims, correction) * std)
    # Where the deviation is zero the slope is taken as zero (PyTorch masks it the same way).
    return fb.where(std == 0, _zero(g), scaled)


def _var(ctx, g):
    x, dim, correction, keepdim = ctx.args
    g, dims = _back(ctx, g, dim, keepdim)
    return _var_part(ctx, x, g, dims, correction)


def _std(ctx, g):
    x, dim, correction, keepdim = ctx.args
    g, dims = _back(ctx, g, dim, keepdim)
    std, _ = _back(ctx, ctx.result, dim, keepdim)
    return _std_part(ctx, x, g, std, dims, correction)


def _moment_mean(ctx, grads, spread):
    x, dim, correction, keepdim = ctx.args
    g_spread, g_mean = grads
    total = None
    dims = reduction_dims(dim, len(ctx.shape(0)))
    if g_spread is not None:
        g, dims = _back(ctx, g_spread, dim, keepdim)
        total = spread(ctx, x, g, dims, correction)
    if g_mean is not None:
        g, dims = _back(ctx, g_mean, dim, keepdim)
        part = (g / _count(ctx.shape(0), dims)).expand(ctx.shape(0))
        total = part if total is None else total + part
    return total


def _var_mean(ctx, grads):
    return _moment_mean(ctx, grads, _var_part)


def _std_mean(ctx, grads):
    std, _ = _back(ctx, ctx.result[0], ctx.args[1], ctx.args[3])
    return _moment_mean(ctx, grads, lambda c, x, g, dims, corr: _std_part(c, x, g, std, dims, corr))


# -- extremes and medians ---------------------------------------------------------------------

def _evenly(x, r, g, dims):
    """``g`` shared evenly among the elements equal to the result ``r`` (NaN matching NaN)."""
    fb = _fb()
    hit = fb.where(r.isnan(), x.isnan(), x == r)
    return fb.where(hit, g / _sum_keep(hit.to(g._dtype), dims), _zero(g))


def _aminmax(ctx, grads):
    x, dim, keepdim = ctx.args
    total = None
    for g, r in zip(grads, ctx.result):
        if g is None:
            continue
        g, dims = _back(ctx, g, dim, keepdim)
        r, _ = _back(ctx, r, dim, keepdim)
        part = _evenly(x, r, g, dims)
        total = part if total is None else total + part
    return total


def _median(ctx, g):
    x = ctx.args[0]
    if x._data.ndim == 0:
        return g
    return _evenly(x, ctx.result, g, None)


def _along(ctx, grads):
    _, dim, keepdim = ctx.args
    return scatter_values(ctx, grads, dim, keepdim)


# -- quantile ------------------------------------------------------------------------------------

def _quantile(ignore_nan: bool):
    def backward(ctx, g):
        fb = _fb()
        x, q, dim, keepdim, interpolation = ctx.args
        shape = ctx.shape(0)
        flat = dim is None or not shape
        xs = x.reshape(-1) if flat else x
        d = 0 if flat else dim % len(shape)
        values, order = xs.sort(d)
        n = xs.shape[d]
        if ignore_nan:
            valid = xs.isnan().logical_not().to(g._dtype).sum(d, keepdim=True)
        else:
            valid = fb.full((), float(n), dtype=g._dtype, device=g._device)
        qs = ctx.kept if isinstance(ctx.kept, list) else [ctx.kept]
        several = isinstance(ctx.kept, list)
        total = fb.zeros(tuple(xs.shape), dtype=g._dtype, device=g._device)
        for i, qv in enumerate(qs):
            gi = g[i] if several else g
            gi = gi.reshape((1,)) if flat else restore_dim(gi, d, len(shape), keepdim)
            rank = (valid - 1).clamp(min=0) * qv
            low, high = rank.floor(), rank.ceil()
            if interpolation == "lower":
                w_low, w_high = 1.0, 0.0
            elif interpolation == "higher":
                w_low, w_high = 0.0, 1.0
            elif interpolation == "midpoint":
                w_low, w_high = 0.5, 0.5
            elif interpolation == "nearest":
                low = high = rank.round()
                w_low, w_high = 1.0, 0.0
            else:
                w_high = rank - low
                w_low = 1.0 - w_high
            for position, weight in ((low, w_low), (high, w_high)):
                index = position.to(fb.int64).expand(tuple(gi.shape))
                total = total + scatter_along(gi * weight, take_along(order, index, d), d, tuple(xs.shape))
        return total.reshape(shape) if flat else total
    return backward


def _keep_q(input, q, dim, keepdim, interpolation):
    from flambeau._tensor import Tensor

    if isinstance(q, Tensor):
        values = q.tolist()
        return values if q._data.ndim == 1 else float(values)
    return float(q)


# -- logsumexp, norm, dist -----------------------------------------------------------------------

def _logsumexp(ctx, g):
    x, dim, keepdim = ctx.args
    g, _ = _back(ctx, g, dim, keepdim)
    r, _ = _back(ctx, ctx.result, dim, keepdim)
    return g * conj((x - r).exp())


def _norm_slope(x, r, g, p, dims):
    """d norm_p(x) / dx times ``g``; ``r`` the norm, reduced dims kept."""
    fb = _fb()
    zero = _zero(g)
    if p == 0:
        return x * 0.0
    # sgn, not sign: for complex x the slope of |x| is x / |x| (and sign() has no second derivative there)
    sgn = x.sgn() if x.dtype.is_complex else x.sign()
    if p == 1:
        return g * sgn
    if p in (math.inf, -math.inf):
        a = x.abs()
        hit = a == r
        return fb.where(hit, g * sgn / _sum_keep(hit.to(g._dtype), dims), zero)
    if p == 2:
        return fb.where(r == 0, zero, g * x / r)
    a = x.abs()
    slope = x * a.pow(p - 2) / r.pow(p - 1)
    return fb.where((r == 0).logical_or(x == 0), zero, g * slope)


def _norm(ctx, g):
    x, p, dim, keepdim, _dtype = ctx.args
    if p == "nuc":
        return _nuclear(ctx, x, g, dim, keepdim)
    g, dims = _back(ctx, g, dim, keepdim)
    r, _ = _back(ctx, ctx.result, dim, keepdim)
    return _norm_slope(x, r, g, 2 if p in ("fro", None) else p, dims)


def _nuclear(ctx, x, g, dim, keepdim):
    """d ||X||_* / dX = U V^H (from the thin SVD), over the two reduced dims."""
    from flambeau.ops._registry import FUNCTIONS

    svd = FUNCTIONS.get("linalg_svd")
    if svd is None:
        raise RuntimeError("norm(p='nuc') backward needs linalg_svd, which no installed package declares")
    ndim = len(ctx.shape(0))
    dims = tuple(range(ndim)) if dim is None else tuple(d % ndim for d in dim)
    rest = [d for d in range(ndim) if d not in dims]
    order = rest + list(dims)
    moved = x.permute(*order)
    u, _s, vh = svd(moved, False)
    slope = (u @ vh).permute(*[order.index(d) for d in range(ndim)])
    g, _ = _back(ctx, g, dim if dim is not None else None, keepdim)
    return g * slope


def _dist(ctx, g):
    x, y, p = ctx.args
    diff = x - y
    slope = _norm_slope(diff, ctx.result, g, p, None)
    return (slope if ctx.needs(0) else None, -slope if ctx.needs(1) else None)


# -- cumulative ops ------------------------------------------------------------------------------

def _reverse_cumsum(t, dim):
    """``sum_{j >= i} t_j`` along ``dim``: the running sum of the flipped tensor, flipped back.

    Not ``total - cumsum + t``: that cancels catastrophically when large terms come first (a
    cumprod's gradient past a tiny factor lost every digit).
    """
    return t.flip(dim).cumsum(dim).flip(dim)


def _cumsum(ctx, g):
    _, dim, _dtype = ctx.args
    if not ctx.shape(0):
        return g
    return _reverse_cumsum(g, dim % len(ctx.shape(0)))


def _cumprod(ctx, g):
    fb = _fb()
    x, dim, _dtype = ctx.args
    shape = ctx.shape(0)
    if not shape:
        return g
    d = dim % len(shape)
    # holomorphic: complex inputs take conjugated slopes (real ones skip the conj op)
    if not bool((x == 0).any()):
        return _reverse_cumsum(g * conj(ctx.result), d) / conj(x)
    # With zeros, d out_j / d x_i is the product of x_k (k <= j, k != i): build, for each i, the
    # input with x_i replaced by one, take its running product, and keep the j >= i part.
    n = shape[d]
    eye = fb.eye(n, dtype=fb.bool, device=g._device)
    lead = [1] * len(shape)
    lead[d] = n
    mask = eye.reshape((n, *lead))  # mask[i] is True at position i along dim
    ones = fb.ones((), dtype=x._dtype, device=g._device)
    replaced = fb.where(mask, ones, x.unsqueeze(0))  # (n, *shape)
    partial = replaced.cumprod(d + 1)
    positions = fb.arange(n, device=g._device)
    later = (positions.reshape(tuple(lead)).unsqueeze(0) >= positions.reshape((n,) + (1,) * len(shape)))
    contrib = fb.where(later, conj(partial) * g.unsqueeze(0), _zero(g)).sum(d + 1)  # (n, *shape without d)
    return contrib.movedim(0, d)


def _cum_extreme(ctx, grads):
    # cummax/cummin keep the input's shape: each value's gradient goes to the index it came from
    return scatter_values(ctx, grads, ctx.args[1])


def _logcumsumexp(ctx, g):
    x, dim = ctx.args
    shape = ctx.shape(0)
    if not shape:
        return g
    d = dim % len(shape)
    out = ctx.result
    # grad_i = sum_{j >= i} g_j exp(x_i - out_j); shifted by the (constant) largest output so
    # that neither exponential overflows for inputs of moderate spread.
    top = (out.real if out.dtype.is_complex else out).amax(d, keepdim=True).detach()
    return _reverse_cumsum(g * conj((top - out).exp()), d) * conj((x - top).exp())


def formulas() -> dict[str, Formula]:
    return {
        "nansum": Formula(_nansum, save=("input",)),
        "nanmean": Formula(_nanmean, save=("input",)),
        "var": Formula(_var, save=("input",)),
        "std": Formula(_std, save=("input",), result=True),
        "var_mean": Formula(_var_mean, save=("input",)),
        "std_mean": Formula(_std_mean, save=("input",), result=True),
        "aminmax": Formula(_aminmax, save=("input",), result=True),
        "median": Formula(_median, save=("input",), result=True),
        "nanmedian": Formula(_median, save=("input",), result=True),
        "median_dim": Formula(_along, result=True),
        "nanmedian_dim": Formula(_along, result=True),
        "mode": Formula(_along, result=True),
        "quantile": Formula(_quantile(False), save=("input",), keep=_keep_q),
        "nanquantile": Formula(_quantile(True), save=("input",), keep=_keep_q),
        "logsumexp": Formula(_logsumexp, save=("input",), result=True),
        "norm": Formula(_norm, save=("input",), result=True),
        "dist": Formula(_dist, save=("input", "other"), result=True),
        "cumsum": Formula(_cumsum),
        "cumprod": Formula(_cumprod, save=("input",), result=True),
        "cummax": Formula(_cum_extreme, result=True),
        "cummin": Formula(_cum_extreme, result=True),
        "logcumsumexp": Formula(_logcumsumexp, save=("input",), result=True),
    }

"""Backward formulas of ``flambeau.fft``'s primitive transforms.

A DFT is linear: its gradient is the adjoint transform, which is the inverse transform with the
dual normalisation ('backward' <-> 'forward', 'ortho' stays), then cut or zero-padded back to the
input's length where ``n``/``s`` changed it. The real-to-complex forms add two details: ``rfft``'s
adjoint sees the half spectrum zero-padded to ``n``, and ``irfft``'s counts each bin that stands
for two conjugate bins twice.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..formula import Formula
from flambeau._core_ops.fft_ops import dual_norm


def _fn(name: str) -> Any:
    from flambeau.ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def _fit(g: Any, dims: Sequence[int], sizes: Sequence[int]) -> Any:
    """``g`` cut or zero-padded along ``dims`` to ``sizes``."""
    import flambeau

    for d, size in zip(dims, sizes):
        have = g.shape[d]
        if have > size:
            g = g.narrow(d, 0, size)
        elif have < size:
            pad = list(g.shape)
            pad[d] = size - have
            g = flambeau.cat([g, flambeau.zeros(pad, dtype=g.dtype, device=g.device)], d)
    return g


def _for_input(g: Any, dtype: Any) -> Any:
    return g.real if not dtype.is_complex else g


def _twice_mirrored(g: Any, dim: int, n: int) -> Any:
    """``g`` (a half spectrum for length ``n``) with the bins that have a conjugate twin doubled."""
    import flambeau

    m = g.shape[dim]
    w = flambeau.ones(m, dtype=g.dtype.to_real() if g.dtype.is_complex else g.dtype, device=g.device)
    last = (n - 1) // 2  # bins 1..last stand for themselves and their mirror
    if last >= 1:
        w[1:min(last, m - 1) + 1] = 2.0
    shape = [1] * g.ndim
    shape[dim] = m
    return g * w.reshape(shape)


def _c2c(inverse_op: str):
    def backward(ctx, g):
        _, n, dim, norm = ctx.args
        shape = ctx.shape(0)
        d = dim % len(shape)
        grad = _fn(inverse_op)(g, None, d, dual_norm(norm))
        return _for_input(_fit(grad, (d,), (shape[d],)), ctx.dtype(0))
    return backward


def _rfft(ctx, g):
    _, n, dim, norm = ctx.args
    shape = ctx.shape(0)
    d = dim % len(shape)
    full = shape[d] if n is None else n
    grad = _fn("fft_ifft")(_fit(g, (d,), (full,)), None, d, dual_norm(norm)).real
    return _fit(grad, (d,), (shape[d],))


def _irfft(ctx, g):
    _, n, dim, norm = ctx.args
    shape = ctx.shape(0)
    d = dim % len(shape)
    out_n = g.shape[d]
    grad = _twice_mirrored(_fn("fft_rfft")(g, None, d, dual_norm(norm)), d, out_n)
    return _for_input(_fit(grad, (d,), (shape[d],)), ctx.dtype(0))


def _plan(ctx, s: Any, dim: Any) -> tuple[int, ...]:
    ndim = len(ctx.shape(0))
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        return tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    return tuple(x % ndim for x in dim)


def _c2c_n(inverse_op: str):
    def backward(ctx, g):
        _, s, dim, norm = ctx.args
        dims = _plan(ctx, s, dim)
        shape = ctx.shape(0)
        if not dims:
            return _for_input(g, ctx.dtype(0))
        grad = _fn(inverse_op)(g, None, dims, dual_norm(norm))
        return _for_input(_fit(grad, dims, [shape[x] for x in dims]), ctx.dtype(0))
    return backward


def _rfftn(ctx, g):
    _, s, dim, norm = ctx.args
    dims = _plan(ctx, s, dim)
    shape = ctx.shape(0)
    last = dims[-1]
    full = shape[last] if s is None or s[-1] == -1 else s[-1]
    padded = _fit(g, (last,), (full,))
    grad = _fn("fft_ifftn")(padded, None, dims, dual_norm(norm)).real
    return _fit(grad, dims, [shape[x] for x in dims])


def _irfftn(ctx, g):
    _, s, dim, norm = ctx.args
    dims = _plan(ctx, s, dim)
    shape = ctx.shape(0)
    last = dims[-1]
    out_n = g.shape[last]
    grad = _fn("fft_rfftn")(g, None, dims, dual_norm(norm))
    grad = _twice_mirrored(grad, last, out_n)
    return _for_input(_fit(grad, dims, [shape[x] for x in dims]), ctx.dtype(0))


def formulas() -> dict[str, Formula]:
    return {
        "fft_fft": Formula(_c2c("fft_ifft")),
        "fft_ifft": Formula(_c2c("fft_fft")),
        "fft_rfft": Formula(_rfft),
        "fft_irfft": Formula(_irfft),
        "fft_fftn": Formula(_c2c_n("fft_ifftn")),
        "fft_ifftn": Formula(_c2c_n("fft_fftn")),
        "fft_rfftn": Formula(_rfftn),
        "fft_irfftn": Formula(_irfftn),
    }

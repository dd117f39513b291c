"""Backward formulas of the scaled-accumulate products (addmm, addmv, addr, addbmm, baddbmm) and vdot.

``out = beta * input + alpha * product``: the input's gradient is ``beta * grad`` (the engine sums
it back to the input's broadcast shape), each factor's is ``alpha`` times the usual product rule.
"""
from __future__ import annotations

from typing import Any

from ..formula import Formula


def _scaled(t: Any, factor: Any) -> Any:
    # PyTorch's convention for complex: the gradient is scaled by the conjugate of the factor
    if isinstance(factor, complex):
        factor = factor.conjugate()
    return t if factor == 1 else t * factor


def _h(t: Any) -> Any:
    """The conjugate of a complex tensor (real ones as they are): products' gradients use A^H."""
    return t.conj() if t.is_complex() else t


def _input_grad(ctx: Any, g: Any) -> Any:
    return _scaled(g, ctx.args[3]) if ctx.needs(0) else None


def _addmm(ctx, g):
    _, a, b, beta, alpha = ctx.args
    ga = _scaled(g.mm(_h(b.t())), alpha) if ctx.needs(1) else None
    gb = _scaled(_h(a.t()).mm(g), alpha) if ctx.needs(2) else None
    return _input_grad(ctx, g), ga, gb


def _addmv(ctx, g):
    _, mat, vec, beta, alpha = ctx.args
    gm = _scaled(g.unsqueeze(1) * _h(vec), alpha) if ctx.needs(1) else None
    gv = _scaled(_h(mat.t()).mv(g), alpha) if ctx.needs(2) else None
    return _input_grad(ctx, g), gm, gv


def _addr(ctx, g):
    _, v1, v2, beta, alpha = ctx.args
    # the vectors may have another dtype than the (promoted) result: bring them to the gradient's
    g1 = _scaled(g.mv(_h(v2.to(g.dtype))), alpha) if ctx.needs(1) else None
    g2 = _scaled(g.t().mv(_h(v1.to(g.dtype))), alpha) if ctx.needs(2) else None
    return _input_grad(ctx, g), g1, g2


def _addbmm(ctx, g):
    _, b1, b2, beta, alpha = ctx.args
    # every batch's product was added into the same (n, m) result: each gets the whole gradient
    g1 = _scaled(g.unsqueeze(0).matmul(_h(b2.transpose(1, 2))), alpha) if ctx.needs(1) else None
    g2 = _scaled(_h(b1.transpose(1, 2)).matmul(g.unsqueeze(0)), alpha) if ctx.needs(2) else None
    return _input_grad(ctx, g), g1, g2


def _baddbmm(ctx, g):
    _, b1, b2, beta, alpha = ctx.args
    g1 = _scaled(g.bmm(_h(b2.transpose(1, 2))), alpha) if ctx.needs(1) else None
    g2 = _scaled(_h(b1.transpose(1, 2)).bmm(g), alpha) if ctx.needs(2) else None
    return _input_grad(ctx, g), g1, g2


def _vdot(ctx, g):
    a, b = ctx.args
    # sum(conj(a) * b): in PyTorch's convention a gets conj(grad) * b and b gets grad * a
    ga = ((g.conj() if g.is_complex() else g) * b) if ctx.needs(0) else None
    gb = g * a if ctx.needs(1) else None
    return ga, gb


def _pair(first: str, second: str) -> dict:
    return {"save": (first, second), "save_if": {first: (second,), second: (first,)}}


def formulas() -> dict[str, Formula]:
    return {
        "addmm": Formula(_addmm, **_pair("mat1", "mat2")),
        "addmv": Formula(_addmv, **_pair("mat", "vec")),
        "addr": Formula(_addr, **_pair("vec1", "vec2")),
        "addbmm": Formula(_addbmm, **_pair("batch1", "batch2")),
        "baddbmm": Formula(_baddbmm, **_pair("batch1", "batch2")),
        "vdot": Formula(_vdot, **_pair("input", "other")),
    }

"""Backward formulas of the matrix products (complex operands: conjugate transposes, ``grad @ B^H``)."""
from __future__ import annotations

from ..formula import Formula
from flambeau._core_ops.linalg import matmul_shape

from ._helpers import conj, sum_to


def _mm(ctx, g):
    a, b = ctx.args
    return (g.mm(conj(b.t())) if ctx.needs(0) else None), (conj(a.t()).mm(g) if ctx.needs(1) else None)


def _bmm(ctx, g):
    a, b = ctx.args
    ga = g.bmm(conj(b.transpose(1, 2))) if ctx.needs(0) else None
    gb = conj(a.transpose(1, 2)).bmm(g) if ctx.needs(1) else None
    return ga, gb


def _mv(ctx, g):
    a, v = ctx.args
    ga = g.unsqueeze(1).mm(conj(v).unsqueeze(0)) if ctx.needs(0) else None
    gv = conj(a.t()).mv(g) if ctx.needs(1) else None
    return ga, gv


def _dot(ctx, g):
    a, b = ctx.args
    return (g * conj(b) if ctx.needs(0) else None), (g * conj(a) if ctx.needs(1) else None)


def _matmul(ctx, g):
    a, b = ctx.args  # only the one the other's gradient needs is saved
    a_shape, b_shape = ctx.shape(0), ctx.shape(1)
    a2_shape = (1,) + a_shape if len(a_shape) == 1 else a_shape  # 1-D operands as matrices
    b2_shape = b_shape + (1,) if len(b_shape) == 1 else b_shape
    g2 = g.reshape(matmul_shape(a2_shape, b2_shape))
    ga = gb = None
    if ctx.needs(0):
        b2 = b.reshape(b2_shape)
        ga = sum_to(g2.matmul(conj(b2.transpose(-1, -2))), a2_shape).reshape(a_shape)
    if ctx.needs(1):
        a2 = a.reshape(a2_shape)
        gb = sum_to(conj(a2.transpose(-1, -2)).matmul(g2), b2_shape).reshape(b_shape)
    return ga, gb


def formulas() -> dict[str, Formula]:
    return {
        "mm": Formula(_mm, save=("input", "mat2"),
                      save_if={"input": ("mat2",), "mat2": ("input",)}),
        "bmm": Formula(_bmm, save=("input", "mat2"),
                      save_if={"input": ("mat2",), "mat2": ("input",)}),
        "mv": Formula(_mv, save=("input", "vec"),
                      save_if={"input": ("vec",), "vec": ("input",)}),
        "dot": Formula(_dot, save=("input", "tensor"),
                      save_if={"input": ("tensor",), "tensor": ("input",)}),
        "matmul": Formula(_matmul, save=("input", "other"),
                      save_if={"input": ("other",), "other": ("input",)}),
    }

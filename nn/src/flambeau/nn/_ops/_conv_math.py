"""Convolution written with flambeau ops: the composites of ``nn_convolution`` and its backward op.

A convolution is a product with the input's windows (im2col). The input is flattened over its
spatial dims to ``(N, C, P)``, one zero is appended (slot ``P``, standing for every padded
position), and ``index_select`` gathers ``(N, C, K * L)``: for each kernel offset ``k`` and output
position ``l`` the input position it reads, or ``P``. col2im, its adjoint, is ``index_add`` with the
same indices. A transposed convolution swaps the two: its input is the small ("column") side.

Shapes (``G`` groups, ``K`` kernel elements, ``L``/``B`` the small and big sides' positions):
conv: ``out (N, G, Og, L) = W (G, Og, Cg*K) @ im2col(x) (N, G, Cg*K, L)``;
transposed: ``out = col2im(W^T (G, Og*K, Cg) @ x (N, G, Cg, L))``.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import flambeau as fb
from flambeau import Tensor


@dataclass(frozen=True)
class Geometry:
    """A checked convolution: sizes per spatial dim, and which side is the big one."""

    batch: int
    in_channels: int
    out_channels: int
    groups: int
    in_size: tuple[int, ...]
    out_size: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool

    @property
    def big(self) -> tuple[int, ...]:
        """The spatial size that the windows are taken from (the input of a convolution)."""
        return self.out_size if self.transposed else self.in_size

    @property
    def small(self) -> tuple[int, ...]:
        """The spatial size with one position per window (the output of a convolution)."""
        return self.in_size if self.transposed else self.out_size


def geometry(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
             transposed: bool, output_padding: Any, groups: int) -> Geometry:
    from .conv import conv_geometry

    return conv_geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


def window_index(g: Geometry, device: Any) -> Tensor:
    """int64 ``(K * L,)``: the flat big-side position kernel offset k reads for small-side position l, or P."""
    n = len(g.kernel)
    big, small = g.big, g.small
    flat = None
    valid = None
    step = 1
    for j in reversed(range(n)):
        kpos = fb.arange(g.kernel[j], device=device) * g.dilation[j]
        opos = fb.arange(small[j], device=device) * g.stride[j] - g.padding[j]
        kshape = [1] * (2 * n)
        kshape[j] = g.kernel[j]
        oshape = [1] * (2 * n)
        oshape[n + j] = small[j]
        pos = kpos.reshape(kshape) + opos.reshape(oshape)
        ok = (pos >= 0) & (pos < big[j])
        flat = pos * step if flat is None else flat + pos * step
        valid = ok if valid is None else valid & ok
        step *= big[j]
    p = prod(big)
    return fb.where(valid, flat, fb.full((), p, dtype=fb.int64, device=device)).reshape(-1)


def im2col(x: Tensor, g: Geometry, index: Tensor) -> Tensor:
    """``x (N, C, *big)`` -> ``(N, C, K, L)``."""
    n, c = x.shape[0], x.shape[1]
    p = prod(g.big)
    flat = fb.cat([x.reshape(n, c, p), fb.zeros((n, c, 1), dtype=x.dtype, device=x.device)], 2)
    return flat.index_select(2, index).reshape(n, c, prod(g.kernel), prod(g.small))


def col2im(cols: Tensor, g: Geometry, index: Tensor) -> Tensor:
    """``cols (N, C, K, L)`` -> ``(N, C, *big)``, each column added where its window reads."""
    n, c = cols.shape[0], cols.shape[1]
    p = prod(g.big)
    acc = fb.zeros((n, c, p + 1), dtype=cols.dtype, device=cols.device)
    acc = acc.index_add(2, index, cols.reshape(n, c, index.shape[0]))
    return acc[:, :, :p].reshape((n, c) + g.big)


def _grouped_weight(weight: Tensor, g: Geometry) -> Tensor:
    """conv: ``(G, Og, Cg*K)``; transposed: ``(G, Cg, Og*K)`` (Cg, Og: the input's / output's channels per group)."""
    return weight.reshape(g.groups, weight.shape[0] // g.groups, prod(weight.shape[1:]))


def _add_bias(out: Tensor, bias: Tensor | None, k: int) -> Tensor:
    return out if bias is None else out + bias.reshape((-1,) + (1,) * k)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
                transposed: bool, output_padding: Any, groups: int) -> Tensor:
    g = geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    n, k, kk, ll = g.batch, len(g.kernel), prod(g.kernel), prod(g.small)
    index = window_index(g, input.device)
    w = _grouped_weight(weight, g)
    if not transposed:
        cols = im2col(input, g, index).reshape(n, g.groups, w.shape[2], ll)
        out = w.matmul(cols).reshape((n, g.out_channels) + g.out_size)
    else:
        x = input.reshape(n, g.groups, w.shape[1], ll)
        cols = w.transpose(1, 2).matmul(x).reshape(n, g.out_channels, kk, ll)
        out = col2im(cols, g, index)
    return _add_bias(out, bias, k)


def grad_input(grad_out: Tensor, weight: Tensor, g: Geometry, index: Tensor) -> Tensor:
    n, kk, ll = g.batch, prod(g.kernel), prod(g.small)
    w = _grouped_weight(weight, g)
    if not g.transposed:
        cols = w.transpose(1, 2).matmul(grad_out.reshape(n, g.groups, w.shape[1], ll))
        return col2im(cols.reshape(n, g.in_channels, kk, ll), g, index)
    cols = im2col(grad_out, g, index).reshape(n, g.groups, w.shape[2], ll)
    return w.matmul(cols).reshape((n, g.in_channels) + g.in_size)


def grad_weight(grad_out: Tensor, input: Tensor, weight: Tensor, g: Geometry, index: Tensor) -> Tensor:
    n, ll = g.batch, prod(g.small)
    w = _grouped_weight(weight, g)  # (G, rows, cols): rows from the small side, cols from the windows
    if not g.transposed:
        cols = im2col(input, g, index).reshape(n, g.groups, w.shape[2], ll)
        gw = grad_out.reshape(n, g.groups, w.shape[1], ll).matmul(cols.transpose(2, 3)).sum(0)
    else:
        cols = im2col(grad_out, g, index).reshape(n, g.groups, w.shape[2], ll)
        gw = input.reshape(n, g.groups, w.shape[1], ll).matmul(cols.transpose(2, 3)).sum(0)
    return gw.reshape(weight.shape)


def grad_bias(grad_out: Tensor) -> Tensor:
    return grad_out.sum([0] + list(range(2, grad_out.ndim)))


def convolution_backward(grad_out: Tensor, input: Tensor, weight: Tensor, stride: Any, padding: Any, dilation: Any,
                         transposed: bool, output_padding: Any, groups: int, output_mask: Any) -> tuple:
    g = geometry(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    index = window_index(g, input.device)
    mask = [bool(m) for m in output_mask]

    def empty() -> Tensor:
        return fb.zeros((0,), dtype=input.dtype, device=input.device)

    gi = grad_input(grad_out, weight, g, index) if mask[0] else empty()
    gw = grad_weight(grad_out, input, weight, g, index) if mask[1] else empty()
    gb = grad_bias(grad_out) if mask[2] else empty()
    return gi, gw, gb

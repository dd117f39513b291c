"""CPU kernels of flambeau-nn's convolution ops (``nn_convolution``, ``nn_convolution_backward``).

im2col/col2im run in C++ (csrc/nn_conv.cpp, threads over the planes); the products are numpy's
matmul on its BLAS, which runs on the same thread pool. The layout follows flambeau-nn's composite
(nn/_ops/_conv_math.py): ``G`` groups, ``K`` kernel elements, ``L`` positions of the small side
(a convolution's output, a transposed convolution's input):

- conv: ``out (N, G, Og, L) = W (G, Og, Cg*K) @ im2col(x) (N, G, Cg*K, L)``;
- transposed: ``out = col2im(W^T (G, Og*K, Cg) @ x (N, G, Cg, L))``.

The backend never imports flambeau-nn: the op's meta function has checked every argument and size
before a kernel runs, and the C++ functions check the sizes again against the arrays they get.
float16/bfloat16 compute on float32 copies.
"""
from __future__ import annotations

from math import prod
from typing import Any, Callable, Sequence

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _ints(value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    vals = tuple(int(v) for v in value)
    return vals * n if len(vals) == 1 else vals


class _Geo:
    """The sizes of one convolution call, from the arrays' shapes and the (already checked) options."""

    def __init__(self, input: np.ndarray, weight: np.ndarray, stride: Any, padding: Any, dilation: Any,
                 transposed: bool, output_padding: Any, groups: int) -> None:
        k = weight.ndim - 2
        self.n, self.groups, self.transposed = input.shape[0], int(groups), bool(transposed)
        self.kernel = tuple(weight.shape[2:])
        self.stride, self.padding, self.dilation = _ints(stride, k), _ints(padding, k), _ints(dilation, k)
        in_size = tuple(input.shape[2:])
        s, p, d, kk = self.stride, self.padding, self.dilation, self.kernel
        if self.transposed:
            op = _ints(output_padding, k)
            self.in_channels, self.out_channels = input.shape[1], weight.shape[1] * self.groups
            out_size = tuple((in_size[i] - 1) * s[i] - 2 * p[i] + d[i] * (kk[i] - 1) + op[i] + 1 for i in range(k))
            self.big, self.small = out_size, in_size
        else:
            self.in_channels, self.out_channels = input.shape[1], weight.shape[0]
            out_size = tuple((in_size[i] + 2 * p[i] - d[i] * (kk[i] - 1) - 1) // s[i] + 1 for i in range(k))
            self.big, self.small = in_size, out_size
        self.in_size, self.out_size = in_size, out_size
        self.kk, self.ll = prod(self.kernel), prod(self.small)

    def _c_args(self) -> tuple:
        pad3 = (3 - len(self.kernel))

        def three(t: Sequence[int], fill: int) -> list[int]:
            return [fill] * pad3 + list(t)

        return (three(self.big, 1), three(self.small, 1), three(self.kernel, 1), three(self.stride, 1),
                three(self.padding, 0), three(self.dilation, 1))

    def im2col(self, x: np.ndarray) -> np.ndarray:
        """``x (N, C, *big)`` -> ``(N, C, K, L)``."""
        x = np.ascontiguousarray(x)
        cols = np.empty(x.shape[:2] + (self.kk, self.ll), dtype=x.dtype)
        _C.nn_im2col(x, cols, x.shape[0] * x.shape[1], *self._c_args())
        return cols

    def col2im(self, cols: np.ndarray) -> np.ndarray:
        """``cols (N, C, K, L)`` -> ``(N, C, *big)``."""
        cols = np.ascontiguousarray(cols)
        x = np.empty(cols.shape[:2] + self.big, dtype=cols.dtype)
        _C.nn_col2im(cols, x, cols.shape[0] * cols.shape[1], *self._c_args())
        return x

    def grouped(self, weight: np.ndarray) -> np.ndarray:
        return weight.reshape(self.groups, weight.shape[0] // self.groups, -1)


def _work(a: np.ndarray | None, dt: np.dtype) -> np.ndarray | None:
    return None if a is None else np.ascontiguousarray(a, dtype=dt)


def _work_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype in (_F32, _F64) else _F32


def _store(out: np.ndarray, value: np.ndarray) -> None:
    np.copyto(out, value.reshape(out.shape), casting="unsafe")


def nn_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, out):
    if out.size == 0:
        return
    g = _Geo(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    dt = _work_dtype(input)
    x, w = _work(input, dt), _work(weight, dt)
    if x.size == 0 or w.size == 0:  # no channels to sum over: the bias alone
        res = np.zeros(out.shape, dtype=dt)
    elif not g.transposed:
        cols = g.im2col(x).reshape(g.n, g.groups, -1, g.ll)
        res = np.matmul(g.grouped(w), cols)
    else:
        cols = np.matmul(g.grouped(w).transpose(0, 2, 1), x.reshape(g.n, g.groups, -1, g.ll))
        res = g.col2im(cols.reshape(g.n, g.out_channels, g.kk, g.ll))
    res = res.reshape(out.shape)
    if bias is not None:
        res += _work(bias, dt).reshape((-1,) + (1,) * (out.ndim - 2))
    _store(out, res)


def nn_convolution_backward(grad_out, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                            output_mask, out):
    g = _Geo(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    dt = _work_dtype(input)
    go, x, w = _work(grad_out, dt), _work(input, dt), _work(weight, dt)
    gi_out, gw_out, gb_out = out
    if go.size == 0 or x.size == 0:  # nothing flows: every requested gradient is zero
        for o in out:
            o.fill(0)
        return
    wg = g.grouped(w)
    small_cols = None  # im2col of the big side, shared by the input and weight gradients of a transposed conv
    if output_mask[0]:
        if not g.transposed:
            cols = np.matmul(wg.transpose(0, 2, 1), go.reshape(g.n, g.groups, -1, g.ll))
            _store(gi_out, g.col2im(cols.reshape(g.n, g.in_channels, g.kk, g.ll)))
        else:
            small_cols = g.im2col(go).reshape(g.n, g.groups, -1, g.ll)
            _store(gi_out, np.matmul(wg, small_cols))
    if output_mask[1]:
        if not g.transposed:
            cols = g.im2col(x).reshape(g.n, g.groups, -1, g.ll)
            gw = np.matmul(go.reshape(g.n, g.groups, -1, g.ll), cols.transpose(0, 1, 3, 2)).sum(0)
        else:
            if small_cols is None:
                small_cols = g.im2col(go).reshape(g.n, g.groups, -1, g.ll)
            gw = np.matmul(x.reshape(g.n, g.groups, -1, g.ll), small_cols.transpose(0, 1, 3, 2)).sum(0)
        _store(gw_out, gw)
    if output_mask[2]:
        _store(gb_out, go.sum(axis=(0,) + tuple(range(2, go.ndim))))


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_convolution": nn_convolution, "nn_convolution_backward": nn_convolution_backward}
    if hasattr(_C, "nn_im2col") else {}  # an extension built before these kernels existed
)

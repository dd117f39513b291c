"""CPU kernels of flambeau-nn's convolution ops (``nn_convolution``, ``nn_convolution_backward``).

Convolutions with groups of 1 run on csrc/nn_conv_packed.cpp: each sample's windows are packed
straight into the panels of the backend's own product (csrc/conv_gemm.h), in the cache, and the
forward writes NCHW directly; a batch of small outputs is packed at once (:func:`_batched`).
Grouped and transposed convolutions, and the cases :func:`_packed` turns down, take the path below.

im2col/col2im run in C++ (csrc/nn_conv.cpp, threads over the planes); the products are numpy's
matmul on its BLAS, which runs on the same thread pool. The columns are laid out ``(C * K, N * L)``
(``K`` kernel elements, ``L`` positions of the small side: a convolution's output, a transposed
convolution's input), so that each group's product over the whole batch is one gemm:

- conv: ``out (G, Og, N*L) = W (G, Og, Cg*K) @ cols(x) (G, Cg*K, N*L)``, then to ``(N, O, L)``;
- transposed: ``out = col2im(W^T (G, Og*K, Cg) @ x (G, Cg, N*L))``.

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

    def pointwise(self) -> bool:
        """A 1x1 convolution with unit stride and no padding: every window is one input element."""
        return self.kk == 1 and all(s == 1 for s in self.stride) and not any(self.padding)

    def im2col(self, x: np.ndarray) -> np.ndarray:
        """``x (N, C, *big)`` -> columns ``(G, C/G * K, N * L)``."""
        x = np.ascontiguousarray(x)
        n, c = x.shape[:2]
        cols = np.empty((c * self.kk, n * self.ll), dtype=x.dtype)
        _C.nn_im2col(x, cols, n, c, True, *self._c_args())
        return cols.reshape(self.groups, -1, n * self.ll)

    def col2im(self, cols: np.ndarray, channels: int) -> np.ndarray:
        """Columns ``(C * K, N * L)`` (any shape of that size) -> ``(N, C, *big)``."""
        cols = np.ascontiguousarray(cols)
        x = np.empty((self.n, channels) + self.big, dtype=cols.dtype)
        _C.nn_col2im(cols, x, self.n, channels, True, *self._c_args())
        return x

    def grouped(self, weight: np.ndarray) -> np.ndarray:
        return weight.reshape(self.groups, weight.shape[0] // self.groups, -1)

    def channels_first(self, a: np.ndarray) -> np.ndarray:
        """``(N, C, *small)`` -> ``(G, C/G, N * L)``: the batch inside each channel's row."""
        n, c = a.shape[:2]
        return np.ascontiguousarray(a.reshape(n, c, self.ll).transpose(1, 0, 2)).reshape(self.groups, -1, n * self.ll)

    def batch_first(self, a: np.ndarray, channels: int) -> np.ndarray:
        """``(G, C/G, N * L)`` -> ``(N, C, L)`` (a view)."""
        return a.reshape(channels, self.n, self.ll).transpose(1, 0, 2)


def _work(a: np.ndarray | None, dt: np.dtype) -> np.ndarray | None:
    return None if a is None else np.ascontiguousarray(a, dtype=dt)


def _work_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype in (_F32, _F64) else _F32


def _target(out: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``out`` itself where a kernel can write it (C-contiguous, working dtype), else a fresh array."""
    return out if out.dtype == dt and out.flags.c_contiguous else np.empty(out.shape, dtype=dt)


def _store(out: np.ndarray, value: np.ndarray) -> None:
    """``out[...] = value`` (same size, maybe another shape), without a copy of a strided ``value``."""
    if value.shape != out.shape and out.flags.c_contiguous:
        np.copyto(out.reshape(value.shape), value, casting="unsafe")
    else:
        np.copyto(out, value.reshape(out.shape), casting="unsafe")


def _weight_product(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``rows @ cols^T`` per group, ``(G, R, M) x (G, C, M) -> (G, R, C)``, M long (batch x positions).

    Computed in the orientation whose result has at least as many rows as columns, the other one
    transposed back by the caller's copy. numpy's OpenBLAS (level3_thread.c) splits a result with
    fewer rows than columns between its threads by rows of the column-major view, and they share
    packed blocks: they wait for each other once per block of the long inner dimension M, and under
    load every wait is a descheduled thread's time slice. ``(64, 12544) @ (12544, 288)`` took 430 ms
    against 48 ms transposed at load 8 (with OpenBLAS's own pool as with flambeau's callback), and the
    CNN's first weight gradient ``(9, 50176) @ (50176, 32)`` ran 10x its one-thread time
    (docs/performance.md). The other split gives each thread its own blocks: no waits.
    """
    if rows.shape[1] >= cols.shape[1]:
        return np.matmul(rows, cols.transpose(0, 2, 1))
    return np.matmul(cols, rows.transpose(0, 2, 1)).transpose(0, 2, 1)


#: The least output positions per sample for which :func:`_convolve_into` (one gemm per sample,
#: straight into the output) beats one gemm over the batch followed by a transposing copy. Below
#: it the per-sample products are too narrow for BLAS (measured in CPU time, one thread: (8, 256,
#: 4, 4) inputs, 16 positions, 20% slower per sample; 196 positions 10-35% faster). Only with one
#: thread: with two, each small gemm is one threaded OpenBLAS call whose threads hand packed blocks
#: to each other, and under load every handshake waits for a descheduled thread (the same layer's
#: forward took 2-5x the CPU time of the one gemm over the batch at load 8).
_DIRECT_OUT_POSITIONS = 128


def _convolve_into(g: _Geo, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """A (non-transposed) convolution written straight into ``out`` (C-contiguous, working dtype).

    The columns ``(G, Cg*K, N*L)`` are read as ``(N, G, Cg*K, L)`` (a strided view: each sample's
    block is a BLAS operand with leading dimension N*L), so the gemm of each sample and group lands
    in ``out``'s own ``(Og, L)`` block: no ``(O, N*L)`` intermediate, no transposing copy after it.
    """
    if g.pointwise():  # the columns are the input itself
        rows = x.reshape(g.n, g.groups, -1, g.ll)
    else:
        rows = g.im2col(x).reshape(g.groups, -1, g.n, g.ll).transpose(2, 0, 1, 3)
    out4 = out.reshape(g.n, g.groups, g.out_channels // g.groups, g.ll)
    np.matmul(g.grouped(w), rows, out=out4)
    if bias is not None:
        out4 += np.asarray(bias, dtype=out.dtype).reshape(g.groups, -1, 1)


#: The most bytes of packed columns for which a forward that the per-sample kernels do not take
#: (outputs of a few positions, or fewer samples than threads) packs the whole batch's columns at once
#: (``_C.nn_conv_forward_packed``'s batched form: the threads split the output channels).
_BATCHED_BYTES = 2 << 20


def _packable(g: _Geo, x: np.ndarray, w: np.ndarray) -> bool:
    """What both packed forms need: groups of 1, not transposed, something to sum, a build with them."""
    return (not g.transposed and g.groups == 1 and x.size > 0 and w.size > 0
            and hasattr(_C, "nn_conv_forward_packed"))


def _packed(g: _Geo, x: np.ndarray, w: np.ndarray) -> bool:
    """Whether csrc/nn_conv_packed.cpp's per-sample kernels take this convolution (else im2col + BLAS).

    They run one product per sample, with a thread per sample: for groups of 1, a batch of at least
    one sample per thread, and outputs whose positions fill their panels of 16 floats (8 doubles) at
    least 4/5 full (a ResNet's 2x2 maps would waste 3/4 of every product).
    """
    if not _packable(g, x, w):
        return False
    width = 64 // x.dtype.itemsize
    return -(-g.ll // width) * width * 4 <= 5 * g.ll and g.n >= _C.get_num_threads()


def _batched(g: _Geo, x: np.ndarray, w: np.ndarray) -> bool:
    """Whether the forward can pack the whole batch's columns at once (a ResNet's 2x2 late layers)."""
    return _packable(g, x, w) and g.n * g.ll * w[0].size * x.dtype.itemsize <= _BATCHED_BYTES


def nn_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, out):
    if out.size == 0:
        return
    g = _Geo(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    dt = _work_dtype(input)
    x, w = _work(input, dt), _work(weight, dt)
    per_sample = _packed(g, x, w)
    batched = not per_sample and _batched(g, x, w)
    if per_sample or batched:
        target = _target(out, dt)
        _C.nn_conv_forward_packed(x, w.reshape(w.shape[0], -1), _work(bias, dt), target, batched, g.n,
                                  g.in_channels, g.out_channels, *g._c_args())
        if target is not out:
            _store(out, target)
        return
    if x.size == 0 or w.size == 0:  # no channels to sum over: the bias alone
        res = np.zeros(out.shape, dtype=dt)
    elif (not g.transposed and (g.ll >= _DIRECT_OUT_POSITIONS or g.pointwise()) and out.dtype == dt
          and out.flags.c_contiguous and _C.get_num_threads() == 1):
        _convolve_into(g, x, w, bias, out)
        return
    elif not g.transposed:
        res = g.batch_first(np.matmul(g.grouped(w), g.im2col(x)), g.out_channels)
    else:
        cols = np.matmul(g.grouped(w).transpose(0, 2, 1), g.channels_first(x))
        res = g.col2im(cols, g.out_channels)
    res = res.reshape(res.shape[0], res.shape[1], -1)  # (N, O, positions): a view in both cases
    b = None if bias is None else _work(bias, dt).reshape(-1, 1)
    if out.dtype == dt and out.flags.c_contiguous:
        target = out.reshape(res.shape)  # a view of out
        if b is None:
            np.copyto(target, res)
        else:
            np.add(res, b, out=target)
        return
    _store(out, res if b is None else res + b)


def nn_convolution_backward(grad_out, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                            output_mask, out):
    g = _Geo(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    dt = _work_dtype(input)
    go, x, w = _work(grad_out, dt), _work(input, dt), _work(weight, dt)
    gi_out, gw_out, gb_out = out
    if go.size == 0 or x.size == 0 or w.size == 0:  # nothing flows: every requested gradient is zero
        for o in out:
            o.fill(0)
        return
    wg = g.grouped(w)
    g_rows = None
    if _packed(g, x, w) and (output_mask[0] or output_mask[1]):
        geo = (g.n, g.in_channels, g.out_channels, *g._c_args())
        if output_mask[0]:
            gi = _target(gi_out, dt)
            _C.nn_conv_input_grad_packed(go, np.ascontiguousarray(w.reshape(w.shape[0], -1).T), gi, *geo)
            if gi is not gi_out:
                _store(gi_out, gi)
        if output_mask[1]:
            gw = _target(gw_out, dt)
            _C.nn_conv_weight_grad_packed(go, x, gw, *geo)
            if gw is not gw_out:
                _store(gw_out, gw)
    elif not g.transposed:
        g_rows = g.channels_first(go)  # (G, Og, N*L)
        if output_mask[0]:
            _store(gi_out, g.col2im(np.matmul(wg.transpose(0, 2, 1), g_rows), g.in_channels))
        if output_mask[1]:
            _store(gw_out, _weight_product(g_rows, g.im2col(x)))
    elif output_mask[0] or output_mask[1]:
        g_cols = g.im2col(go)  # (G, Og*K, N*L): the windows of the big side
        if output_mask[0]:
            _store(gi_out, g.batch_first(np.matmul(wg, g_cols), g.in_channels))
        if output_mask[1]:
            _store(gw_out, _weight_product(g.channels_first(x), g_cols))
    if output_mask[2]:
        if g_rows is not None:  # (G, Og, N*L), contiguous: one reduction along rows
            _store(gb_out, g_rows.sum(axis=-1))
        else:
            _store(gb_out, go.reshape(go.shape[0], go.shape[1], -1).sum(axis=(0, 2)))


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_convolution": nn_convolution, "nn_convolution_backward": nn_convolution_backward}
    if hasattr(_C, "nn_im2col") else {}  # an extension built before these kernels existed
)

"""Conformance cases of flambeau-nn's recurrent cell ops (``nn_lstm_cell``, ``nn_gru_cell`` and their
backward ops): the cell equations written out in numpy, PyTorch's gate orders."""
from __future__ import annotations

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOOSE = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1), "float32": (1e-5, 1e-5)}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _chunks(a, n):
    h = a.shape[-1] // n
    return [a[..., k * h:(k + 1) * h] for k in range(n)]


# -- LSTM -------------------------------------------------------------------------------------------------

def _lstm_ref(gates, cx):
    i, f, g, o = _chunks(gates, 4)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    cy = f * cx + i * g
    return o * np.tanh(cy), cy, np.concatenate([i, f, g, o], -1)


def _lstm_samples(dtype):
    return [
        Sample((Arg((3, 8), dtype), Arg((3, 2), dtype))),
        Sample((Arg((5, 20), dtype, "transposed"), Arg((5, 5), dtype, "transposed")), note="strided"),
        Sample((Arg((1, 4), dtype, low=-30, high=30), Arg((1, 1), dtype)), note="saturated gates"),
        Sample((Arg((0, 12), dtype), Arg((0, 3), dtype)), note="empty batch"),
    ]


def _lstm_errors():
    yield ErrorCase((Arg((3, 7), "float32"), Arg((3, 2), "float32")), RuntimeError,
                    "nn_lstm_cell: expected gates of size [3, 8], but got [3, 7]")
    yield ErrorCase((Arg((3, 8), "int64"), Arg((3, 2), "int64")), RuntimeError, "not implemented for 'Long'")
    yield ErrorCase((Arg((3, 8), "float32"), Arg((3, 2), "float64")), RuntimeError,
                    "expected all tensors to have dtype Float, but got Double")
    yield ErrorCase((Arg((8,), "float32"), Arg((2,), "float32")), RuntimeError, "expected 2-D gates and state")


def _lstm_backward_samples(dtype):
    out = []
    for b, h, which in ((3, 2, "both"), (4, 5, "hy"), (2, 3, "cy")):
        ghy = Arg((b, h), dtype) if which != "cy" else None
        gcy = Arg((b, h), dtype) if which != "hy" else None
        work = Arg((b, 4 * h), dtype, low=0.05, high=0.95)  # activated gates: sigmoids (and tanh) in range
        out.append(Sample((ghy, gcy, Arg((b, h), dtype), Arg((b, h), dtype, low=-2, high=2), work), note=which))
    return out


def _lstm_backward_ref(ghy, gcy, cx, cy, work):
    i, f, g, o = _chunks(work, 4)
    tc = np.tanh(cy)
    gh = ghy if ghy is not None else np.zeros_like(cy)
    gc = gh * o * (1 - tc * tc) + (gcy if gcy is not None else 0)
    grads = [gc * g * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - g * g), gh * tc * o * (1 - o)]
    return np.concatenate(grads, -1), gc * f


# -- GRU --------------------------------------------------------------------------------------------------

def _gru_ref(ig, hg, hx):
    ir, iz, in_ = _chunks(ig, 3)
    hr, hz, hn = _chunks(hg, 3)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    return (1 - z) * n + z * hx, np.concatenate([r, z, n, hn], -1)


def _gru_samples(dtype):
    return [
        Sample((Arg((3, 6), dtype), Arg((3, 6), dtype), Arg((3, 2), dtype))),
        Sample((Arg((4, 9), dtype, "transposed"), Arg((4, 9), dtype), Arg((4, 3), dtype, "transposed")),
               note="strided"),
        Sample((Arg((0, 3), dtype), Arg((0, 3), dtype), Arg((0, 1), dtype)), note="empty batch"),
    ]


def _gru_errors():
    yield ErrorCase((Arg((3, 6), "float32"), Arg((2, 6), "float32"), Arg((3, 2), "float32")), RuntimeError,
                    "nn_gru_cell: expected hgates of size [3, 6], but got [2, 6]")
    yield ErrorCase((Arg((3, 5), "float32"), Arg((3, 6), "float32"), Arg((3, 2), "float32")), RuntimeError,
                    "nn_gru_cell: expected gates of size [3, 6], but got [3, 5]")


def _gru_backward_samples(dtype):
    return [Sample((Arg((b, h), dtype), Arg((b, h), dtype), Arg((b, 4 * h), dtype, low=0.05, high=0.95)))
            for b, h in ((3, 2), (5, 7))]


def _gru_backward_ref(g, hx, work):
    r, z, n, hn = _chunks(work, 4)
    dn = g * (1 - z) * (1 - n * n)
    dz = g * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return np.concatenate([dr, dz, dn], -1), np.concatenate([dr, dz, dn * r], -1), g * z


# -- a whole LSTM layer -----------------------------------------------------------------------------------

def _projection(x, w_ih, b_ih, b_hh):
    return x @ w_ih.T + (0 if b_ih is None else b_ih) + (0 if b_hh is None else b_hh)


def _lstm_layer_ref(x, h0, c0, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse=False):
    xproj = _projection(x, w_ih, b_ih, b_hh)
    offsets = np.cumsum((0,) + tuple(batch_sizes))[:-1]
    h, c = h0.copy(), c0.copy()
    hidden = h0.shape[1]
    n = xproj.shape[0]
    out, work, cells = np.zeros((n, hidden)), np.zeros((n, 4 * hidden)), np.zeros((n, hidden))
    steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in steps:
        bs, off = batch_sizes[t], offsets[t]
        hy, cy, wk = _lstm_ref(xproj[off:off + bs] + h[:bs] @ w_hh.T, c[:bs])
        out[off:off + bs], cells[off:off + bs], work[off:off + bs] = hy, cy, wk
        h[:bs], c[:bs] = hy, cy
    return out, h, c, work, cells


def _lstm_layer_samples(dtype):
    return [
        Sample((Arg((6, 3), dtype), Arg((2, 2), dtype), Arg((2, 2), dtype), Arg((8, 3), dtype, low=-1, high=1),
                Arg((8, 2), dtype, low=-1, high=1), Arg((8,), dtype), Arg((8,), dtype), (2, 2, 2), False)),
        Sample((Arg((5, 4), dtype), Arg((3, 3), dtype), Arg((3, 3), dtype), Arg((12, 4), dtype, low=-1, high=1),
                Arg((12, 3), dtype, "transposed", low=-1, high=1), None, None, (3, 1, 1), True),
               note="packed, reverse, no bias"),
    ]


def _lstm_layer_errors():
    x, h, wi, w, b = (Arg((5, 3), "float32"), Arg((2, 2), "float32"), Arg((8, 3), "float32"), Arg((8, 2), "float32"),
                      Arg((8,), "float32"))
    yield ErrorCase((x, h, h, wi, w, b, b, (2, 2), False), RuntimeError,
                    "batch_sizes sum to 4, but the input has 5 rows")
    yield ErrorCase((x, h, h, wi, w, b, b, (1, 2, 2), False), RuntimeError, "must be non-negative and non-increasing")
    yield ErrorCase((x, h, h, Arg((8, 4), "float32"), w, b, b, (2, 2, 1), False), RuntimeError,
                    "expected w_ih of size [8, 3], but got [8, 4]")


def _gru_layer_ref(xproj, h0, w_hh, b_hh, batch_sizes, reverse=False):
    offsets = np.cumsum((0,) + tuple(batch_sizes))[:-1]
    h = h0.copy()
    hidden = h0.shape[1]
    n = xproj.shape[0]
    out, work = np.zeros((n, hidden)), np.zeros((n, 4 * hidden))
    steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in steps:
        bs, off = batch_sizes[t], offsets[t]
        hg = h[:bs] @ w_hh.T + (b_hh if b_hh is not None else 0)
        hy, wk = _gru_ref(xproj[off:off + bs], hg, h[:bs])
        out[off:off + bs], work[off:off + bs] = hy, wk
        h[:bs] = hy
    return out, h, work


def _gru_layer_samples(dtype):
    return [
        Sample((Arg((6, 6), dtype), Arg((2, 2), dtype), Arg((6, 2), dtype, low=-1, high=1), Arg((6,), dtype),
                (2, 2, 2), False)),
        Sample((Arg((5, 9), dtype), Arg((3, 3), dtype), Arg((9, 3), dtype, "transposed", low=-1, high=1), None,
                (3, 1, 1), True), note="packed, reverse, no bias"),
    ]


# -- the layers' backward: backpropagation through time written out ---------------------------------------

def _replay(h0, c0, output, cells, batch_sizes, reverse):
    """Each step in the order the forward ran it: (row offset, rows, previous h, previous c), the
    previous states read from the forward's saved outputs (as the backward ops read them)."""
    offsets = np.cumsum((0,) + tuple(batch_sizes))[:-1]
    h, c = h0.copy(), None if c0 is None else c0.copy()
    steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    out = []
    for t in steps:
        bs, off = batch_sizes[t], offsets[t]
        out.append((off, bs, h[:bs].copy(), None if c is None else c[:bs].copy()))
        h[:bs] = output[off:off + bs]
        if c is not None:
            c[:bs] = cells[off:off + bs]
    return out


def _lstm_layer_backward_ref(grad_output, grad_hn, grad_cn, x, h0, c0, w_ih, w_hh, output, workspace, cell_states,
                             batch_sizes, reverse, output_mask):
    hidden = h0.shape[1]
    dh = np.zeros_like(h0) if grad_hn is None else grad_hn.copy()
    dc = np.zeros_like(c0) if grad_cn is None else grad_cn.copy()
    gx, gw = np.zeros(workspace.shape), np.zeros(w_hh.shape)
    for off, bs, h_prev, c_prev in reversed(_replay(h0, c0, output, cell_states, batch_sizes, reverse)):
        rows = slice(off, off + bs)
        i, f, g, o = _chunks(workspace[rows], 4)
        tc = np.tanh(cell_states[rows])
        d_h = dh[:bs] + (0 if grad_output is None else grad_output[rows])
        d_c = dc[:bs] + d_h * o * (1 - tc * tc)
        gates = np.concatenate([d_c * g * i * (1 - i), d_c * c_prev * f * (1 - f), d_c * i * (1 - g * g),
                                d_h * tc * o * (1 - o)], -1)
        gx[rows] = gates
        gw += gates.T @ h_prev
        dh[:bs], dc[:bs] = gates @ w_hh, d_c * f
    assert gx.shape[1] == 4 * hidden
    grads = (gx @ w_ih, dh, dc, gx.T @ x, gw, gx.sum(0))
    return tuple(gr if m or k in (1, 2) else np.zeros((0,)) for k, (gr, m) in enumerate(zip(grads, output_mask)))


def _lstm_layer_backward_samples(dtype):
    rng = np.random.default_rng(11)
    out = []
    for (b, h, sizes, reverse), which, mask in (
            ((2, 2, (2, 2, 2), False), "all", (True,) * 6),
            ((3, 3, (3, 1, 1), True), "hn", (True,) * 6),
            ((3, 2, (3, 2), False), "output", (False, True, True, False, True, True))):
        n, i = sum(sizes), h + 1
        x, h0, c0 = rng.uniform(-2, 2, (n, i)), rng.uniform(-1, 1, (b, h)), rng.uniform(-1, 1, (b, h))
        w_ih, w, bias = rng.uniform(-1, 1, (4 * h, i)), rng.uniform(-1, 1, (4 * h, h)), rng.uniform(-1, 1, 4 * h)
        output, _, _, work, cells = _lstm_layer_ref(x, h0, c0, w_ih, w, bias, None, sizes, reverse)

        def arg(a):
            return Arg(a.shape, dtype, values=a)
        go = arg(rng.uniform(-1, 1, (n, h))) if which in ("all", "output") else None
        ghn = arg(rng.uniform(-1, 1, (b, h))) if which in ("all", "hn") else None
        gcn = arg(rng.uniform(-1, 1, (b, h))) if which == "all" else None
        note = f"{which}{', packed, reverse' if reverse else ''}{'' if all(mask) else ', masked'}"
        out.append(Sample((go, ghn, gcn, arg(x), arg(h0), arg(c0), arg(w_ih), arg(w), arg(output), arg(work),
                           arg(cells), sizes, reverse, mask), note=note))
    return out


def _gru_layer_backward_ref(grad_output, grad_hn, h0, w_hh, output, workspace, batch_sizes, reverse=False):
    dh = np.zeros_like(h0) if grad_hn is None else grad_hn.copy()
    gx, gw, gb = np.zeros((output.shape[0], w_hh.shape[0])), np.zeros(w_hh.shape), np.zeros(w_hh.shape[0])
    for off, bs, h_prev, _ in reversed(_replay(h0, None, output, None, batch_sizes, reverse)):
        rows = slice(off, off + bs)
        r, z, n, hn = _chunks(workspace[rows], 4)
        d_h = dh[:bs] + (0 if grad_output is None else grad_output[rows])
        dan = d_h * (1 - z) * (1 - n * n)
        dar = dan * hn * r * (1 - r)
        daz = d_h * (h_prev - n) * z * (1 - z)
        gx[rows] = np.concatenate([dar, daz, dan], -1)
        d_hg = np.concatenate([dar, daz, dan * r], -1)
        gw += d_hg.T @ h_prev
        gb += d_hg.sum(0)
        dh[:bs] = d_h * z + d_hg @ w_hh
    return gx, dh, gw, gb


def _gru_layer_backward_samples(dtype):
    rng = np.random.default_rng(12)
    out = []
    for (b, h, sizes, reverse, bias), which in (((2, 2, (2, 2, 2), False, True), "all"),
                                                ((3, 3, (3, 1, 1), True, False), "hn"),
                                                ((3, 2, (3, 2), False, True), "output")):
        n = sum(sizes)
        xproj, h0 = rng.uniform(-2, 2, (n, 3 * h)), rng.uniform(-1, 1, (b, h))
        w = rng.uniform(-1, 1, (3 * h, h))
        b_hh = rng.uniform(-1, 1, 3 * h) if bias else None
        output, _, work = _gru_layer_ref(xproj, h0, w, b_hh, sizes, reverse)

        def arg(a):
            return Arg(a.shape, dtype, values=a)
        go = arg(rng.uniform(-1, 1, (n, h))) if which in ("all", "output") else None
        ghn = arg(rng.uniform(-1, 1, (b, h))) if which in ("all", "hn") else None
        out.append(Sample((go, ghn, arg(h0), arg(w), arg(output), arg(work), sizes, reverse),
                          note=f"{which}{', packed, reverse' if reverse else ''}"))
    return out


# -- a whole RNN (tanh/relu) layer, forward and backward ---------------------------------------------------

def _rnn_layer_ref(xproj, h0, w_hh, batch_sizes, reverse=False, relu=False):
    offsets = np.cumsum((0,) + tuple(batch_sizes))[:-1]
    h = h0.copy()
    out = np.zeros((xproj.shape[0], h0.shape[1]))
    for t in (range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))):
        bs, off = batch_sizes[t], offsets[t]
        pre = xproj[off:off + bs] + h[:bs] @ w_hh.T
        out[off:off + bs] = h[:bs] = np.maximum(pre, 0) if relu else np.tanh(pre)
    return out, h


def _rnn_layer_samples(dtype):
    w = Arg((3, 3), dtype, low=-1, high=1)
    return [
        Sample((Arg((6, 3), dtype), Arg((2, 3), dtype), w, (2, 2, 2), False, False), note="tanh"),
        Sample((Arg((5, 3), dtype), Arg((3, 3), dtype), Arg((3, 3), dtype, "transposed", low=-1, high=1), (3, 1, 1),
                True, True), note="relu, packed, reverse"),
    ]


def _rnn_layer_errors():
    x, h, w = Arg((5, 2), "float32"), Arg((2, 2), "float32"), Arg((2, 2), "float32")
    yield ErrorCase((x, h, w, (2, 2), False, False), RuntimeError, "batch_sizes sum to 4, but the input has 5 rows")
    yield ErrorCase((Arg((4, 3), "float32"), h, w, (2, 2), False, False), RuntimeError, "expected xproj of size")


def _rnn_layer_backward_ref(grad_output, grad_hn, h0, w_hh, output, batch_sizes, reverse=False, relu=False):
    dh = np.zeros_like(h0) if grad_hn is None else grad_hn.copy()
    gx, gw = np.zeros(output.shape), np.zeros(w_hh.shape)
    for off, bs, h_prev, _ in reversed(_replay(h0, None, output, None, batch_sizes, reverse)):
        rows = slice(off, off + bs)
        y = output[rows]
        d_h = dh[:bs] + (0 if grad_output is None else grad_output[rows])
        d_pre = d_h * (y > 0) if relu else d_h * (1 - y * y)
        gx[rows] = d_pre
        gw += d_pre.T @ h_prev
        dh[:bs] = d_pre @ w_hh
    return gx, dh, gw


def _rnn_layer_backward_samples(dtype):
    rng = np.random.default_rng(13)
    out = []
    for (b, h, sizes, reverse, relu), which in (((2, 2, (2, 2, 2), False, False), "all"),
                                                ((3, 3, (3, 1, 1), True, True), "hn"),
                                                ((3, 2, (3, 2), False, True), "output")):
        n = sum(sizes)
        xproj, h0, w = rng.uniform(-2, 2, (n, h)), rng.uniform(-1, 1, (b, h)), rng.uniform(-1, 1, (h, h))
        output, _ = _rnn_layer_ref(xproj, h0, w, sizes, reverse, relu)

        def arg(a):
            return Arg(a.shape, dtype, values=a)
        go = arg(rng.uniform(-1, 1, (n, h))) if which in ("all", "output") else None
        ghn = arg(rng.uniform(-1, 1, (b, h))) if which in ("all", "hn") else None
        out.append(Sample((go, ghn, arg(h0), arg(w), arg(output), sizes, reverse, relu),
                          note=f"{which}, {'relu' if relu else 'tanh'}{', packed, reverse' if reverse else ''}"))
    return out


def cases() -> list[OpCase]:
    def same(count):
        return lambda s: (next(a for a in s.args if a is not None).dtype,) * count
    return [
        OpCase("nn_lstm_cell", _FLOATS, _lstm_samples, _lstm_ref, same(3), errors=_lstm_errors, tolerances=_LOOSE),
        OpCase("nn_lstm_cell_backward", _FLOATS, _lstm_backward_samples, _lstm_backward_ref, same(2),
               tolerances=_LOOSE),
        OpCase("nn_gru_cell", _FLOATS, _gru_samples, _gru_ref, same(2), errors=_gru_errors, tolerances=_LOOSE),
        OpCase("nn_gru_cell_backward", _FLOATS, _gru_backward_samples, _gru_backward_ref, same(3), tolerances=_LOOSE),
        OpCase("nn_lstm_layer", ("float32", "float64"), _lstm_layer_samples, _lstm_layer_ref, same(5),
               errors=_lstm_layer_errors, tolerances=_LOOSE),
        OpCase("nn_gru_layer", ("float32", "float64"), _gru_layer_samples, _gru_layer_ref, same(3), tolerances=_LOOSE),
        OpCase("nn_lstm_layer_backward", ("float32", "float64"), _lstm_layer_backward_samples,
               _lstm_layer_backward_ref, same(6), tolerances=_LOOSE),
        OpCase("nn_gru_layer_backward", ("float32", "float64"), _gru_layer_backward_samples,
               _gru_layer_backward_ref, same(4), tolerances=_LOOSE),
        OpCase("nn_rnn_layer", ("float32", "float64"), _rnn_layer_samples, _rnn_layer_ref, same(2),
               errors=_rnn_layer_errors, tolerances=_LOOSE),
        OpCase("nn_rnn_layer_backward", ("float32", "float64"), _rnn_layer_backward_samples,
               _rnn_layer_backward_ref, same(3), tolerances=_LOOSE),
    ]

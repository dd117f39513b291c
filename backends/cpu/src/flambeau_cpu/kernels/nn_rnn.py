"""Fused kernels for flambeau-nn's recurrent cell ops (``nn_lstm_cell``, ``nn_gru_cell`` and their
backward ops), run by ``flambeau_cpu._C`` (csrc/nn_rnn.cpp).

The backend never imports flambeau-nn: these are registered under the op names and used only when
that package declares the ops (whose meta functions have checked every shape and dtype). The C++ code
takes C-contiguous float32/float64 arrays of one dtype; float16/bfloat16 inputs compute on float32
copies, other layouts on contiguous copies, and outputs the C++ code cannot write directly go through
working arrays copied back.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _work_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype in (_F32, _F64) else _F32


def _arr(a: np.ndarray | None, dtype: np.dtype) -> np.ndarray | None:
    """``a`` as a C-contiguous array of ``dtype`` (itself when it already is one)."""
    if a is None:
        return None
    return np.ascontiguousarray(a, dtype=dtype)


def _target(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An array the C++ code can write for ``out``: ``out`` itself, or a working array copied back by _store."""
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dtype)


def _store(outs: Any, works: Any) -> None:
    for out, work in zip(outs, works):
        if work is not out:
            np.copyto(out, work.reshape(out.shape), casting="unsafe")


def nn_lstm_cell(gates, cx, out):
    dt = _work_dtype(gates)
    batch, hidden = cx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_lstm_cell(_arr(gates, dt), _arr(cx, dt), *works, batch, hidden)
    _store(out, works)


def nn_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, out):
    dt = _work_dtype(cx)
    batch, hidden = cx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_lstm_cell_backward(_arr(grad_hy, dt), _arr(grad_cy, dt), _arr(cx, dt), _arr(cy, dt), _arr(workspace, dt),
                             *works, batch, hidden)
    _store(out, works)


def nn_gru_cell(igates, hgates, hx, out):
    dt = _work_dtype(igates)
    batch, hidden = hx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_cell(_arr(igates, dt), _arr(hgates, dt), _arr(hx, dt), *works, batch, hidden)
    _store(out, works)


def nn_gru_cell_backward(grad_hy, hx, workspace, out):
    dt = _work_dtype(hx)
    batch, hidden = hx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_cell_backward(_arr(grad_hy, dt), _arr(hx, dt), _arr(workspace, dt), *works, batch, hidden)
    _store(out, works)


# -- a whole LSTM layer: the steps looped here, each a BLAS product and one C++ cell ---------------------

def _offsets(batch_sizes) -> list[int]:
    out, total = [], 0
    for bs in batch_sizes:
        out.append(total)
        total += bs
    return out


def _steps(batch_sizes, reverse: bool) -> range:
    n = len(batch_sizes)
    return range(n - 1, -1, -1) if reverse else range(n)


def nn_lstm_layer(xproj, h0, c0, w_hh, batch_sizes, reverse, out):
    dt = _work_dtype(xproj)
    x = _arr(xproj, dt)
    w = _arr(w_hh, dt)
    w_t = np.ascontiguousarray(w.T)  # once per layer: numpy's small products run ~2x faster on it
    output, h_n, c_n, work, cells = (_target(o, dt) for o in out)
    h = np.array(h0, dtype=dt)  # the running states, updated row block by row block
    c = np.array(c0, dtype=dt)
    hidden = h.shape[1]
    offsets = _offsets(batch_sizes)
    gates = np.empty((h.shape[0], 4 * hidden), dtype=dt)
    for t in _steps(batch_sizes, reverse):
        bs, off = batch_sizes[t], offsets[t]
        if bs == 0:
            continue
        g = gates[:bs]
        np.matmul(h[:bs], w_t, out=g)
        g += x[off:off + bs]
        hy, cy = output[off:off + bs], cells[off:off + bs]
        _C.nn_lstm_cell(g, c[:bs], hy, cy, work[off:off + bs], bs, hidden)
        h[:bs] = hy
        c[:bs] = cy
    np.copyto(h_n, h, casting="unsafe")
    np.copyto(c_n, c, casting="unsafe")
    _store(out, (output, h_n, c_n, work, cells))


def nn_lstm_layer_backward(grad_output, grad_hn, grad_cn, h0, c0, w_hh, output, workspace, cell_states, batch_sizes,
                           reverse, out):
    dt = _work_dtype(h0)
    w = _arr(w_hh, dt)
    hs, cs, work = _arr(output, dt), _arr(cell_states, dt), _arr(workspace, dt)
    h_init, c_init = _arr(h0, dt), _arr(c0, dt)
    gout = _arr(grad_output, dt)
    gx, gh0, gc0, gw = (_target(o, dt) for o in out)
    batch, hidden = h_init.shape
    dh = np.array(grad_hn, dtype=dt) if grad_hn is not None else np.zeros((batch, hidden), dt)
    dc = np.array(grad_cn, dtype=dt) if grad_cn is not None else np.zeros((batch, hidden), dt)
    offsets = _offsets(batch_sizes)
    h_before = np.empty((hs.shape[0], hidden), dtype=dt)  # each step's previous states, for one product at the end
    steps = len(batch_sizes)
    dcp = np.empty((batch, hidden), dtype=dt)
    for t in reversed(_steps(batch_sizes, reverse)):
        bs, off = batch_sizes[t], offsets[t]
        if bs == 0:
            continue
        dht = dh[:bs]
        if gout is not None:
            dht += gout[off:off + bs]
        prev = t + 1 if reverse else t - 1
        if 0 <= prev < steps:  # the states before step t: the previous step's rows, the initial ones beyond
            pbs = min(batch_sizes[prev], bs)
            h_prev = np.concatenate([hs[offsets[prev]:offsets[prev] + pbs], h_init[pbs:bs]])
            c_prev = np.concatenate([cs[offsets[prev]:offsets[prev] + pbs], c_init[pbs:bs]])
        else:
            h_prev, c_prev = h_init[:bs], c_init[:bs]
        h_before[off:off + bs] = h_prev
        c_prev = np.ascontiguousarray(c_prev)
        dg = gx[off:off + bs]
        _C.nn_lstm_cell_backward(np.ascontiguousarray(dht), np.ascontiguousarray(dc[:bs]), c_prev, cs[off:off + bs],
                                 work[off:off + bs], dg, dcp[:bs], bs, hidden)
        np.matmul(dg, w, out=dh[:bs])
        dc[:bs] = dcp[:bs]
    np.matmul(gx.T, h_before, out=gw)  # sum over steps of grad_gates^T @ h_prev, as one product
    np.copyto(gh0, dh, casting="unsafe")
    np.copyto(gc0, dc, casting="unsafe")
    _store(out, (gx, gh0, gc0, gw))


def nn_gru_layer(xproj, h0, w_hh, b_hh, batch_sizes, reverse, out):
    dt = _work_dtype(xproj)
    x = _arr(xproj, dt)
    w_t = np.ascontiguousarray(_arr(w_hh, dt).T)
    bias = _arr(b_hh, dt)
    output, h_n, work = (_target(o, dt) for o in out)
    h = np.array(h0, dtype=dt)
    hidden = h.shape[1]
    offsets = _offsets(batch_sizes)
    hgates = np.empty((h.shape[0], 3 * hidden), dtype=dt)
    for t in _steps(batch_sizes, reverse):
        bs, off = batch_sizes[t], offsets[t]
        if bs == 0:
            continue
        hg = hgates[:bs]
        np.matmul(h[:bs], w_t, out=hg)
        if bias is not None:
            hg += bias
        hy = output[off:off + bs]
        _C.nn_gru_cell(x[off:off + bs], hg, np.ascontiguousarray(h[:bs]), hy, work[off:off + bs], bs, hidden)
        h[:bs] = hy
    np.copyto(h_n, h, casting="unsafe")
    _store(out, (output, h_n, work))


def nn_gru_layer_backward(grad_output, grad_hn, h0, w_hh, output, workspace, batch_sizes, reverse, out):
    dt = _work_dtype(h0)
    w = _arr(w_hh, dt)
    hs, work, h_init = _arr(output, dt), _arr(workspace, dt), _arr(h0, dt)
    gout = _arr(grad_output, dt)
    gx, gh0, gw, gb = (_target(o, dt) for o in out)
    batch, hidden = h_init.shape
    dh = np.array(grad_hn, dtype=dt) if grad_hn is not None else np.zeros((batch, hidden), dt)
    offsets = _offsets(batch_sizes)
    steps = len(batch_sizes)
    n = hs.shape[0]
    h_before = np.empty((n, hidden), dtype=dt)
    dhg_all = np.empty((n, 3 * hidden), dtype=dt)
    dhx = np.empty((batch, hidden), dtype=dt)
    for t in reversed(_steps(batch_sizes, reverse)):
        bs, off = batch_sizes[t], offsets[t]
        if bs == 0:
            continue
        dht = dh[:bs]
        if gout is not None:
            dht += gout[off:off + bs]
        prev = t + 1 if reverse else t - 1
        if 0 <= prev < steps:
            pbs = min(batch_sizes[prev], bs)
            h_before[off:off + pbs] = hs[offsets[prev]:offsets[prev] + pbs]
            h_before[off + pbs:off + bs] = h_init[pbs:bs]
        else:
            h_before[off:off + bs] = h_init[:bs]
        dhg = dhg_all[off:off + bs]
        _C.nn_gru_cell_backward(np.ascontiguousarray(dht), h_before[off:off + bs], work[off:off + bs],
                                gx[off:off + bs], dhg, dhx[:bs], bs, hidden)
        np.matmul(dhg, w, out=dh[:bs])
        dh[:bs] += dhx[:bs]
    np.matmul(dhg_all.T, h_before, out=gw)
    np.sum(dhg_all, axis=0, out=gb)
    np.copyto(gh0, dh, casting="unsafe")
    _store(out, (gx, gh0, gw, gb))


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_lstm_cell": nn_lstm_cell, "nn_lstm_cell_backward": nn_lstm_cell_backward,
     "nn_gru_cell": nn_gru_cell, "nn_gru_cell_backward": nn_gru_cell_backward,
     "nn_lstm_layer": nn_lstm_layer, "nn_lstm_layer_backward": nn_lstm_layer_backward,
     "nn_gru_layer": nn_gru_layer, "nn_gru_layer_backward": nn_gru_layer_backward}
    if hasattr(_C, "nn_lstm_cell") else {}  # an extension built before these kernels existed
)

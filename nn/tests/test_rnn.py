"""Recurrent layers: RNN, LSTM, GRU, their cells, and nn.utils.rnn's packed sequences.

References are the cell equations written out in numpy (float64), PyTorch's gate orders: i, f, g, o
for the LSTM; r, z, n for the GRU, r multiplying ``W_hn h + b_hn``. A packed batch's reference runs
each sequence alone over its own length.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._ops import _rnn_math as M
from flambeau.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                   pad_sequence, unpack_sequence, unpad_sequence)

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def npy(x):
    return np.asarray(x.detach().numpy(), dtype=np.float64)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- numpy references ---------------------------------------------------------------------------------

def ref_rnn_cell(x, h, w_ih, w_hh, b_ih, b_hh, act="tanh"):
    pre = x @ w_ih.T + h @ w_hh.T + (b_ih if b_ih is not None else 0) + (b_hh if b_hh is not None else 0)
    return np.tanh(pre) if act == "tanh" else np.maximum(pre, 0)


def ref_lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    gates = x @ w_ih.T + h @ w_hh.T + (b_ih if b_ih is not None else 0) + (b_hh if b_hh is not None else 0)
    hs = c.shape[-1]
    i, f, g, o = (gates[..., k * hs:(k + 1) * hs] for k in range(4))
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    c2 = f * c + i * g
    h2 = o * np.tanh(c2)
    if w_hr is not None:
        h2 = h2 @ w_hr.T
    return h2, c2


def ref_gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = x @ w_ih.T + (b_ih if b_ih is not None else 0)
    gh = h @ w_hh.T + (b_hh if b_hh is not None else 0)
    hs = h.shape[-1]
    ir, iz, in_ = (gi[..., k * hs:(k + 1) * hs] for k in range(3))
    hr, hz, hn = (gh[..., k * hs:(k + 1) * hs] for k in range(3))
    r = sigmoid(ir + hr)
    z = sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    return (1 - z) * n + z * h


def ref_layers(module, x, h0=None, c0=None):
    """The module's maths on time-major ``x`` (T, B, I) in numpy: ``(output, h_n, c_n)``."""
    mode = module.mode
    dirs = 2 if module.bidirectional else 1
    real = module.proj_size or module.hidden_size
    steps, batch = x.shape[:2]
    if h0 is None:
        h0 = np.zeros((module.num_layers * dirs, batch, real))
    if c0 is None and mode == "LSTM":
        c0 = np.zeros((module.num_layers * dirs, batch, module.hidden_size))
    weights = [[npy(w) for w in ws] for ws in module.all_weights]
    layer_in = x
    hn, cn = [], []
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            ws = weights[k]
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if module.bias else (None, None)
            w_hr = ws[-1] if module.proj_size else None
            h, c = h0[k], (c0[k] if c0 is not None else None)
            out = np.zeros((steps, batch, real))
            for s in (range(steps - 1, -1, -1) if d else range(steps)):
                if mode == "LSTM":
                    h, c = ref_lstm_cell(layer_in[s], h, c, w_ih, w_hh, b_ih, b_hh, w_hr)
                elif mode == "GRU":
                    h = ref_gru_cell(layer_in[s], h, w_ih, w_hh, b_ih, b_hh)
                else:
                    h = ref_rnn_cell(layer_in[s], h, w_ih, w_hh, b_ih, b_hh, "tanh" if mode == "RNN_TANH" else "relu")
                out[s] = h
            outs.append(out)
            hn.append(h)
            cn.append(c)
        layer_in = np.concatenate(outs, -1)
    return layer_in, np.stack(hn), (np.stack(cn) if mode == "LSTM" else None)


def make(cls, *args, dtype=fb.float64, **kwargs):
    fb.manual_seed(0)
    return cls(*args, **kwargs).to(dtype)


# -- the fused cell ops ---------------------------------------------------------------------------------

_lstm_op = fb.ops.function("nn_lstm_cell")
_gru_op = fb.ops.function("nn_gru_cell")
_lstm_bwd = fb.ops.function("nn_lstm_cell_backward")
_gru_bwd = fb.ops.function("nn_gru_cell_backward")


@pytest.mark.parametrize("dtype,tol", [(fb.float32, 2e-6), (fb.float64, 1e-13)])
@pytest.mark.parametrize("batch,hidden", [(3, 5), (1, 1), (7, 33), (0, 4)])
def test_lstm_cell_op(dtype, tol, batch, hidden):
    gates = RNG.standard_normal((batch, 4 * hidden)) * 3
    cx = RNG.standard_normal((batch, hidden))
    w = np.zeros((0, 0))
    h2, c2 = ref_lstm_cell(np.zeros((batch, 0)), np.zeros((batch, 0)), cx, w.reshape(4 * hidden, 0),
                           w.reshape(4 * hidden, 0), gates, None)
    for fn in (_lstm_op, M.lstm_cell):  # the CPU kernel and the composite every backend runs
        hy, cy, work = fn(t(gates, dtype), t(cx, dtype))
        assert hy.dtype == dtype and tuple(hy.shape) == (batch, hidden) and tuple(work.shape) == (batch, 4 * hidden)
        np.testing.assert_allclose(npy(hy), h2, rtol=tol, atol=tol)
        np.testing.assert_allclose(npy(cy), c2, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [(fb.float32, 2e-6), (fb.float64, 1e-13)])
@pytest.mark.parametrize("batch,hidden", [(3, 5), (1, 1), (7, 33), (0, 4)])
def test_gru_cell_op(dtype, tol, batch, hidden):
    ig = RNG.standard_normal((batch, 3 * hidden)) * 2
    hg = RNG.standard_normal((batch, 3 * hidden)) * 2
    hx = RNG.standard_normal((batch, hidden))
    # the cell equations on the projections: r applies to the hidden one's n part (its bias included)
    hs = hidden
    r = sigmoid(ig[:, :hs] + hg[:, :hs])
    z = sigmoid(ig[:, hs:2 * hs] + hg[:, hs:2 * hs])
    n = np.tanh(ig[:, 2 * hs:] + r * hg[:, 2 * hs:])
    expected = (1 - z) * n + z * hx
    for fn in (_gru_op, M.gru_cell):
        hy, work = fn(t(ig, dtype), t(hg, dtype), t(hx, dtype))
        assert hy.dtype == dtype and tuple(work.shape) == (batch, 4 * hidden)
        np.testing.assert_allclose(npy(hy), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("grads", ["both", "hy", "cy"])
def test_lstm_cell_backward_op_matches_composite(grads):
    gates, cx = RNG.standard_normal((4, 24)), RNG.standard_normal((4, 6))
    ghy = t(RNG.standard_normal((4, 6))) if grads != "cy" else None
    gcy = t(RNG.standard_normal((4, 6))) if grads != "hy" else None
    _, cy, work = _lstm_op(t(gates), t(cx))
    got = _lstm_bwd(ghy, gcy, t(cx), cy, work)
    want = M.lstm_cell_backward(ghy, gcy, t(cx), cy, work)
    for a, b in zip(got, want):
        np.testing.assert_allclose(npy(a), npy(b), rtol=1e-12, atol=1e-13)


def test_gru_cell_backward_op_matches_composite():
    ig, hg, hx = (t(RNG.standard_normal(s)) for s in ((5, 9), (5, 9), (5, 3)))
    _, work = _gru_op(ig, hg, hx)
    g = t(RNG.standard_normal((5, 3)))
    for a, b in zip(_gru_bwd(g, hx, work), M.gru_cell_backward(g, hx, work)):
        np.testing.assert_allclose(npy(a), npy(b), rtol=1e-12, atol=1e-13)


def test_cell_ops_noncontiguous_and_half():
    gates = t(RNG.standard_normal((8, 6)), fb.float32).t()  # (6, 8) transposed view: 4 * 2 hidden
    cx = t(RNG.standard_normal((2, 6)), fb.float32).t()
    hy, cy, _ = _lstm_op(gates, cx)
    h2, c2 = M.lstm_cell(gates.contiguous(), cx.contiguous())[:2]
    np.testing.assert_allclose(npy(hy), npy(h2), rtol=1e-6, atol=1e-6)
    hy16, _, _ = _lstm_op(gates.to(fb.bfloat16), cx.to(fb.bfloat16))
    assert hy16.dtype == fb.bfloat16
    np.testing.assert_allclose(npy(hy16.float()), npy(hy), atol=3e-2)


def test_cell_op_errors():
    with pytest.raises(RuntimeError, match=r"nn_lstm_cell: expected gates of size \[3, 8\], but got \[3, 7\]"):
        _lstm_op(fb.zeros(3, 7), fb.zeros(3, 2))
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        _lstm_op(fb.zeros(3, 8, dtype=fb.int64), fb.zeros(3, 2, dtype=fb.int64))
    with pytest.raises(RuntimeError, match="expected all tensors to have dtype Float, but got Double"):
        _gru_op(fb.zeros(3, 6), fb.zeros(3, 6, dtype=fb.float64), fb.zeros(3, 2))
    with pytest.raises(RuntimeError, match=r"nn_gru_cell: expected hgates of size \[3, 6\], but got \[2, 6\]"):
        _gru_op(fb.zeros(3, 6), fb.zeros(2, 6), fb.zeros(3, 2))


def test_cell_ops_gradcheck():
    gates = t(RNG.standard_normal((3, 8)), requires_grad=True)
    cx = t(RNG.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda g, c: _lstm_op(g, c)[:2], (gates, cx))
    assert gradcheck(lambda g, c: _lstm_op(g, c)[0], (gates, cx))
    assert gradcheck(lambda g, c: _lstm_op(g, c)[1], (gates, cx))
    assert gradgradcheck(lambda g, c: _lstm_op(g, c)[:2], (gates, cx))
    ig, hg, hx = (t(RNG.standard_normal(s), requires_grad=True) for s in ((3, 6), (3, 6), (3, 2)))
    assert gradcheck(lambda a, b, c: _gru_op(a, b, c)[0], (ig, hg, hx))
    assert gradgradcheck(lambda a, b, c: _gru_op(a, b, c)[0], (ig, hg, hx))


_layer_op = fb.ops.function("nn_lstm_layer")
_layer_bwd = fb.ops.function("nn_lstm_layer_backward")

LAYER_SIZES = [(4, (3, 3, 3, 3)), (3, (3, 2, 2, 1)), (2, (2,)), (3, ())]


@pytest.mark.parametrize("batch,sizes", LAYER_SIZES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
def test_lstm_layer_op_matches_cells(batch, sizes, reverse, bias, dtype, tol):
    hidden, inputs, n = 3, 5, sum(sizes)
    x = RNG.standard_normal((n, inputs))
    h0, c0 = RNG.standard_normal((batch, hidden)), RNG.standard_normal((batch, hidden))
    w_ih, w = RNG.standard_normal((4 * hidden, inputs)) * 0.5, RNG.standard_normal((4 * hidden, hidden)) * 0.5
    b_ih, b_hh = (RNG.standard_normal(4 * hidden), RNG.standard_normal(4 * hidden)) if bias else (None, None)
    # the reference: each step's cell written out, the first sizes[t] sequences advancing
    h, c = h0.copy(), c0.copy()
    offsets = np.cumsum((0,) + sizes)[:-1]
    out = np.zeros((n, hidden))
    for step in (range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))):
        bs, off = sizes[step], offsets[step]
        hy, cy = ref_lstm_cell(x[off:off + bs], h[:bs], c[:bs], w_ih, w, b_ih, b_hh)
        out[off:off + bs], h[:bs], c[:bs] = hy, hy, cy
    args = tuple(None if a is None else t(a, dtype) for a in (x, h0, c0, w_ih, w, b_ih, b_hh)) + (sizes, reverse)
    for fn in (_layer_op, M.lstm_layer):
        got = fn(*args)
        for a, b in zip(got[:3], (out, h, c)):
            np.testing.assert_allclose(npy(a), b, rtol=tol, atol=tol)


def _layer_args(batch, sizes, hidden=2, inputs=3, bias=True, requires_grad=False):
    n = sum(sizes)
    shapes = [(n, inputs), (batch, hidden), (batch, hidden), (4 * hidden, inputs), (4 * hidden, hidden)]
    shapes += [(4 * hidden,), (4 * hidden,)] if bias else []
    made = [t(RNG.standard_normal(s), requires_grad=requires_grad) for s in shapes]
    return made + ([] if bias else [None, None])


@pytest.mark.parametrize("batch,sizes", LAYER_SIZES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("which", ["all", "output", "states"])
def test_lstm_layer_backward_op_matches_composite(batch, sizes, reverse, which):
    hidden, n = 2, sum(sizes)
    x, h0, c0, w_ih, w, b_ih, b_hh = _layer_args(batch, sizes, hidden)
    out, _, _, work, cells = _layer_op(x, h0, c0, w_ih, w, b_ih, b_hh, sizes, reverse)
    g_out = t(RNG.standard_normal((n, hidden))) if which != "states" else None
    g_h = t(RNG.standard_normal((batch, hidden))) if which != "output" else None
    g_c = t(RNG.standard_normal((batch, hidden))) if which != "output" else None
    for mask in ((True,) * 6, (False, True, True, False, True, False)):
        args = (g_out, g_h, g_c, x, h0, c0, w_ih, w, out, work, cells, sizes, reverse, mask)
        for a, b in zip(_layer_bwd(*args), M.lstm_layer_backward(*args)):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(npy(a), npy(b), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("sizes,reverse,bias", [((2, 2, 1), False, True), ((2, 1, 1), True, True),
                                                ((2, 1), False, False)])
def test_lstm_layer_gradcheck(sizes, reverse, bias):
    args = _layer_args(2, sizes, bias=bias, requires_grad=True)
    given = [a for a in args if a is not None]

    def layer(*tensors):
        full = list(tensors) + ([] if bias else [None, None])
        return _layer_op(*full, sizes, reverse)[:3]
    assert gradcheck(layer, given)
    assert gradgradcheck(layer, given)


def test_lstm_layer_bias_gradients_are_separate_tensors():
    x, h0, c0, w_ih, w, b_ih, b_hh = _layer_args(2, (2, 1), requires_grad=True)
    _layer_op(x, h0, c0, w_ih, w, b_ih, b_hh, (2, 1), False)[0].sum().backward()
    np.testing.assert_array_equal(npy(b_ih.grad), npy(b_hh.grad))
    b_ih.grad.add_(1)  # one leaf's gradient changed in place leaves the other's
    assert not np.array_equal(npy(b_ih.grad), npy(b_hh.grad))


_gru_layer_op = fb.ops.function("nn_gru_layer")
_gru_layer_bwd = fb.ops.function("nn_gru_layer_backward")


@pytest.mark.parametrize("batch,sizes", LAYER_SIZES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_layer_op_matches_cells(batch, sizes, reverse, bias):
    hidden, n = 3, sum(sizes)
    xproj = RNG.standard_normal((n, 3 * hidden))
    h0 = RNG.standard_normal((batch, hidden))
    w = RNG.standard_normal((3 * hidden, hidden)) * 0.5
    b = RNG.standard_normal(3 * hidden) if bias else None
    h = h0.copy()
    offsets = np.cumsum((0,) + sizes)[:-1]
    out = np.zeros((n, hidden))
    eye = np.eye(3 * hidden)
    for step in (range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))):
        bs, off = sizes[step], offsets[step]
        hy = ref_gru_cell(xproj[off:off + bs], h[:bs], eye, w, None, b)
        out[off:off + bs], h[:bs] = hy, hy
    args = (t(xproj), t(h0), t(w), t(b) if bias else None, sizes, reverse)
    for fn in (_gru_layer_op, M.gru_layer):
        got = fn(*args)
        np.testing.assert_allclose(npy(got[0]), out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(npy(got[1]), h, rtol=1e-12, atol=1e-12)
    out_t, _, work = _gru_layer_op(*args)
    g_out, g_h = t(RNG.standard_normal((n, hidden))), t(RNG.standard_normal((batch, hidden)))
    bargs = (g_out, g_h, t(h0), t(w), out_t, work, sizes, reverse)
    for a, c in zip(_gru_layer_bwd(*bargs), M.gru_layer_backward(*bargs)):
        np.testing.assert_allclose(npy(a), npy(c), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sizes,reverse", [((2, 2, 1), False), ((2, 1, 1), True)])
def test_gru_layer_gradcheck(sizes, reverse):
    hidden, batch, n = 2, 2, sum(sizes)
    xproj = t(RNG.standard_normal((n, 3 * hidden)), requires_grad=True)
    w = t(RNG.standard_normal((3 * hidden, hidden)), requires_grad=True)
    b = t(RNG.standard_normal(3 * hidden), requires_grad=True)
    h0 = t(RNG.standard_normal((batch, hidden)), requires_grad=True)
    assert gradcheck(lambda x, a, ww, bb: _gru_layer_op(x, a, ww, bb, sizes, reverse)[:2], (xproj, h0, w, b))
    assert gradgradcheck(lambda x, a, ww, bb: _gru_layer_op(x, a, ww, bb, sizes, reverse)[:2], (xproj, h0, w, b))


_rnn_layer_op = fb.ops.function("nn_rnn_layer")
_rnn_layer_bwd = fb.ops.function("nn_rnn_layer_backward")


@pytest.mark.parametrize("batch,sizes", LAYER_SIZES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_rnn_layer_op_matches_steps(batch, sizes, reverse, relu):
    hidden, n = 3, sum(sizes)
    xproj = RNG.standard_normal((n, hidden))
    h0 = RNG.standard_normal((batch, hidden))
    w = RNG.standard_normal((hidden, hidden)) * 0.5
    h = h0.copy()
    offsets = np.cumsum((0,) + sizes)[:-1]
    out = np.zeros((n, hidden))
    for step in (range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))):
        bs, off = sizes[step], offsets[step]
        pre = xproj[off:off + bs] + h[:bs] @ w.T
        out[off:off + bs] = h[:bs] = np.maximum(pre, 0) if relu else np.tanh(pre)
    args = (t(xproj), t(h0), t(w), sizes, reverse, relu)
    for fn in (_rnn_layer_op, M.rnn_layer):
        got = fn(*args)
        np.testing.assert_allclose(npy(got[0]), out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(npy(got[1]), h, rtol=1e-12, atol=1e-12)
    out_t = _rnn_layer_op(*args)[0]
    g_out, g_h = t(RNG.standard_normal((n, hidden))), t(RNG.standard_normal((batch, hidden)))
    for go, gh in ((g_out, g_h), (None, g_h), (g_out, None)):
        bargs = (go, gh, t(h0), t(w), out_t, sizes, reverse, relu)
        for a, c in zip(_rnn_layer_bwd(*bargs), M.rnn_layer_backward(*bargs)):
            np.testing.assert_allclose(npy(a), npy(c), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sizes,reverse,relu", [((2, 2, 1), False, False), ((2, 1, 1), True, True)])
def test_rnn_layer_gradcheck(sizes, reverse, relu):
    hidden, batch, n = 2, 2, sum(sizes)
    xproj = t(RNG.standard_normal((n, hidden)), requires_grad=True)
    w = t(RNG.standard_normal((hidden, hidden)), requires_grad=True)
    h0 = t(RNG.standard_normal((batch, hidden)), requires_grad=True)
    assert gradcheck(lambda x, a, ww: _rnn_layer_op(x, a, ww, sizes, reverse, relu), (xproj, h0, w))
    assert gradgradcheck(lambda x, a, ww: _rnn_layer_op(x, a, ww, sizes, reverse, relu), (xproj, h0, w))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_module_records_one_node_per_layer(nonlinearity):
    m = make(nn.RNN, 2, 3, nonlinearity=nonlinearity, num_layers=2)
    out, h = m(t(RNG.standard_normal((6, 2, 2))))
    seen, stack = set(), [out.grad_fn]
    while stack:  # the graph's nodes; a per-step loop would record a few per step
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(f for f, _ in node.next_functions)
    names = [type(n).__name__ for n in seen]
    assert len(seen) < 20, names


def test_lstm_layer_op_errors():
    x, h, wi, w, b = fb.zeros(5, 3), fb.zeros(2, 2), fb.zeros(8, 3), fb.zeros(8, 2), fb.zeros(8)
    with pytest.raises(RuntimeError, match="nn_lstm_layer: batch_sizes sum to 4, but the input has 5 rows"):
        _layer_op(x, h, h, wi, w, b, b, (2, 2), False)
    with pytest.raises(RuntimeError, match="batch_sizes must be non-negative and non-increasing"):
        _layer_op(x, h, h, wi, w, b, b, (1, 2, 2), False)
    with pytest.raises(RuntimeError, match=r"batch_sizes\[0\] is 3, but the state holds 2 sequences"):
        _layer_op(x, h, h, wi, w, b, b, (3, 2), False)
    with pytest.raises(RuntimeError, match=r"nn_lstm_layer: expected w_hh of size \[8, 2\], but got \[8, 3\]"):
        _layer_op(x, h, h, wi, fb.zeros(8, 3), b, b, (2, 2, 1), False)
    with pytest.raises(RuntimeError, match=r"nn_lstm_layer: expected w_ih of size \[8, 3\], but got \[8, 4\]"):
        _layer_op(x, h, h, fb.zeros(8, 4), w, b, b, (2, 2, 1), False)
    with pytest.raises(RuntimeError, match=r"nn_lstm_layer: expected b_hh of size \[8\], but got \[7\]"):
        _layer_op(x, h, h, wi, w, b, fb.zeros(7), (2, 2, 1), False)
    with pytest.raises(RuntimeError, match="expected all tensors to have dtype Float, but got Double"):
        _layer_op(x, h, h, wi, w, b, b.double(), (2, 2, 1), False)
    out, _, _, work, cells = _layer_op(x, h, h, wi, w, b, b, (2, 2, 1), False)
    with pytest.raises(RuntimeError, match="output_mask must have 6 entries, got 3"):
        _layer_bwd(out, None, None, x, h, h, wi, w, out, work, cells, (2, 2, 1), False, (True,) * 3)


# -- layers against the reference -----------------------------------------------------------------------

CONFIGS = [
    dict(num_layers=1),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=2, bias=False),
    dict(num_layers=1, batch_first=True, bidirectional=True),
]


@pytest.mark.parametrize("kind", ["RNN_TANH", "RNN_RELU", "LSTM", "GRU", "LSTM_PROJ"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("with_state", [False, True])
def test_layer_matches_reference(kind, config, with_state):
    extra = {}
    if kind == "RNN_TANH":
        cls = nn.RNN
    elif kind == "RNN_RELU":
        cls, extra = nn.RNN, dict(nonlinearity="relu")
    elif kind == "LSTM_PROJ":
        cls, extra = nn.LSTM, dict(proj_size=2)
    else:
        cls = getattr(nn, kind)
    m = make(cls, 3, 4, **config, **extra)
    steps, batch = 5, 2
    x = RNG.standard_normal((steps, batch, 3))
    dirs = 2 if m.bidirectional else 1
    real = m.proj_size or 4
    h0 = RNG.standard_normal((m.num_layers * dirs, batch, real)) if with_state else None
    c0 = RNG.standard_normal((m.num_layers * dirs, batch, 4)) if with_state and m.mode == "LSTM" else None
    out_ref, hn_ref, cn_ref = ref_layers(m, x, h0, c0)
    xin = t(x.transpose(1, 0, 2) if m.batch_first else x)
    if not with_state:
        state = None
    elif m.mode == "LSTM":
        state = (t(h0), t(c0))
    else:
        state = t(h0)
    out, hidden = m(xin, state)
    got_out = npy(out).transpose(1, 0, 2) if m.batch_first else npy(out)
    np.testing.assert_allclose(got_out, out_ref, rtol=1e-10, atol=1e-12)
    if m.mode == "LSTM":
        np.testing.assert_allclose(npy(hidden[0]), hn_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(npy(hidden[1]), cn_ref, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(npy(hidden), hn_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_layer_float32(cls):
    m = make(cls, 6, 5, num_layers=2, dtype=fb.float32)
    x = RNG.standard_normal((4, 3, 6))
    out, _ = m(t(x, fb.float32))
    assert out.dtype == fb.float32
    np.testing.assert_allclose(npy(out), ref_layers(m, x)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input(cls, batch_first):
    m = make(cls, 3, 4, num_layers=2, batch_first=batch_first)
    x = RNG.standard_normal((5, 3))
    out, hidden = m(t(x))
    ref_out, ref_h, ref_c = ref_layers(m, x[:, None, :])
    assert tuple(out.shape) == (5, 4)
    np.testing.assert_allclose(npy(out), ref_out[:, 0], rtol=1e-10, atol=1e-12)
    h = hidden[0] if cls is nn.LSTM else hidden
    assert tuple(h.shape) == (2, 4)
    np.testing.assert_allclose(npy(h), ref_h[:, 0], rtol=1e-10, atol=1e-12)
    # with an unbatched initial state
    state = (t(ref_h[:, 0]), t(ref_c[:, 0])) if cls is nn.LSTM else t(ref_h[:, 0])
    out2, _ = m(t(x), state)
    h0 = ref_h[:, 0][:, None]
    c0 = ref_c[:, 0][:, None] if cls is nn.LSTM else None
    np.testing.assert_allclose(npy(out2), ref_layers(m, x[:, None, :], h0, c0)[0][:, 0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls,kw", [(nn.LSTM, {}), (nn.GRU, {}), (nn.RNN, {}), (nn.LSTM, dict(proj_size=2))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_matches_each_sequence(cls, kw, enforce_sorted):
    m = make(cls, 3, 4, num_layers=2, bidirectional=True, **kw)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs = [RNG.standard_normal((n, 3)) for n in lengths]
    packed = pack_sequence([t(s) for s in seqs], enforce_sorted=enforce_sorted)
    out, hidden = m(packed)
    assert isinstance(out, PackedSequence)
    padded, lens = pad_packed_sequence(out)
    assert lens.tolist() == lengths
    h_n = hidden[0] if cls is nn.LSTM else hidden
    for b, s in enumerate(seqs):
        ref_out, ref_h, ref_c = ref_layers(m, s[:, None, :])
        np.testing.assert_allclose(npy(padded[:lengths[b], b]), ref_out[:, 0], rtol=1e-10, atol=1e-12)
        assert np.all(npy(padded[lengths[b]:, b]) == 0)
        np.testing.assert_allclose(npy(h_n[:, b]), ref_h[:, 0], rtol=1e-10, atol=1e-12)
        if cls is nn.LSTM:
            np.testing.assert_allclose(npy(hidden[1][:, b]), ref_c[:, 0], rtol=1e-10, atol=1e-12)


def test_packed_with_initial_state_and_unsorted():
    m = make(nn.GRU, 2, 3)
    lengths = [2, 4, 3]
    x = RNG.standard_normal((4, 3, 2))
    h0 = RNG.standard_normal((1, 3, 3))
    out, h_n = m(pack_padded_sequence(t(x), lengths, enforce_sorted=False), t(h0))
    padded, _ = pad_packed_sequence(out)
    for b, n in enumerate(lengths):
        ref_out, ref_h, _ = ref_layers(m, x[:n, b:b + 1], h0[:, b:b + 1])
        np.testing.assert_allclose(npy(padded[:n, b]), ref_out[:, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(npy(h_n[:, b]), ref_h[:, 0], rtol=1e-10, atol=1e-12)


def test_packed_equals_padded_when_full_length():
    m = make(nn.LSTM, 3, 4, num_layers=2, bidirectional=True)
    x = t(RNG.standard_normal((4, 2, 3)))
    out, (h, c) = m(x)
    pout, (ph, pc) = m(pack_padded_sequence(x, [4, 4]))
    np.testing.assert_allclose(npy(pad_packed_sequence(pout)[0]), npy(out), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(npy(ph), npy(h), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(npy(pc), npy(c), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_packed_equals_padded_on_valid_steps(cls):
    # one direction: the padded run's valid steps never see the padding, so they match the packed run
    m = make(cls, 3, 4, num_layers=2, batch_first=True)
    lengths = [4, 2, 3]
    x = t(RNG.standard_normal((3, 4, 3)))
    out, _ = m(x)
    pout, _ = m(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    padded, _ = pad_packed_sequence(pout, batch_first=True)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(npy(padded[b, :n]), npy(out[b, :n]), rtol=1e-12, atol=1e-14)


def test_dropout_between_layers():
    m = make(nn.GRU, 3, 4, num_layers=2, dropout=1.0)
    x = t(RNG.standard_normal((3, 2, 3)))
    m.eval()
    out_eval, _ = m(x)
    np.testing.assert_allclose(npy(out_eval), ref_layers(m, npy(x))[0], rtol=1e-10, atol=1e-12)
    m.train()
    out_train, h = m(x)
    # p = 1 zeroes the first layer's output: the second layer sees zeros
    second = make(nn.GRU, 4, 4)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(second, f"{name}_l0").data = getattr(m, f"{name}_l1").detach().clone()
    np.testing.assert_allclose(npy(out_train), npy(second(fb.zeros(3, 2, 4, dtype=fb.float64))[0]), rtol=1e-12)


def test_layer_backward_matches_reference_grad():
    m = make(nn.LSTM, 3, 4, num_layers=2, bidirectional=True, proj_size=2)
    x = t(RNG.standard_normal((4, 2, 3)), requires_grad=True)
    out, (h, c) = m(x)
    (out.sum() + h.square().sum() + c.sum()).backward()
    # central differences of the numpy reference along one weight and the input
    w = m.weight_hh_l1_reverse
    base = npy(w).copy()

    def loss_ref(wv, xv):
        with fb.no_grad():
            w.copy_(t(wv))
        o, hh, cc = ref_layers(m, xv)
        return o.sum() + (hh ** 2).sum() + cc.sum()

    eps = 1e-6
    idx = (1, 0)
    up, down = base.copy(), base.copy()
    up[idx] += eps
    down[idx] -= eps
    fd = (loss_ref(up, npy(x)) - loss_ref(down, npy(x))) / (2 * eps)
    with fb.no_grad():
        w.copy_(t(base))
    np.testing.assert_allclose(npy(w.grad)[idx], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("cls,kw", [(nn.LSTM, dict(bidirectional=True)), (nn.GRU, dict(num_layers=2)),
                                    (nn.RNN, dict(bidirectional=True)), (nn.LSTM, dict(proj_size=1))])
def test_layer_gradcheck(cls, kw):
    m = make(cls, 2, 3, **kw)
    x = t(RNG.standard_normal((3, 1, 2)), requires_grad=True)
    lstm = cls is nn.LSTM
    real = m.proj_size or 3
    h0 = t(RNG.standard_normal((m.num_layers * (2 if m.bidirectional else 1), 1, real)), requires_grad=True)
    c0 = t(RNG.standard_normal((h0.shape[0], 1, 3)), requires_grad=True)

    def run(x, h0, c0, *params):  # the parameters are the module's own: gradcheck perturbs them in place
        out, hidden = m(x, (h0, c0) if lstm else h0)
        return (out,) + (hidden if lstm else (hidden,))

    assert gradcheck(run, (x, h0, c0) + tuple(m.parameters()))


def test_packed_backward_reaches_input():
    m = make(nn.LSTM, 2, 3)
    seqs = [t(RNG.standard_normal((n, 2)), requires_grad=True) for n in (4, 2, 1)]
    out, (h, c) = m(pack_sequence(seqs))
    padded, _ = pad_packed_sequence(out)
    (padded.sum() + h.sum()).backward()
    for s in seqs:
        assert s.grad is not None and tuple(s.grad.shape) == tuple(s.shape)
    assert gradcheck(lambda a, b: pad_packed_sequence(m(pack_sequence([a, b]))[0])[0], tuple(seqs[:2]))


# -- modules: parameters, repr, errors ----------------------------------------------------------------------

def test_parameter_names_and_shapes():
    m = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes == {
        "weight_ih_l0": (80, 10), "weight_hh_l0": (80, 5), "bias_ih_l0": (80,), "bias_hh_l0": (80,),
        "weight_hr_l0": (5, 20),
        "weight_ih_l0_reverse": (80, 10), "weight_hh_l0_reverse": (80, 5), "bias_ih_l0_reverse": (80,),
        "bias_hh_l0_reverse": (80,), "weight_hr_l0_reverse": (5, 20),
        "weight_ih_l1": (80, 10), "weight_hh_l1": (80, 5), "bias_ih_l1": (80,), "bias_hh_l1": (80,),
        "weight_hr_l1": (5, 20),
        "weight_ih_l1_reverse": (80, 10), "weight_hh_l1_reverse": (80, 5), "bias_ih_l1_reverse": (80,),
        "bias_hh_l1_reverse": (80,), "weight_hr_l1_reverse": (5, 20),
    }
    assert list(m.state_dict()) == m._flat_weights_names
    assert [len(ws) for ws in m.all_weights] == [5] * 4
    assert m._flat_weights[0] is m.weight_ih_l0
    g = nn.GRU(4, 6, bias=False)
    assert {k: tuple(v.shape) for k, v in g.state_dict().items()} == {"weight_ih_l0": (18, 4),
                                                                      "weight_hh_l0": (18, 6)}
    c = nn.LSTMCell(3, 5)
    assert {k: tuple(v.shape) for k, v in c.state_dict().items()} == {
        "weight_ih": (20, 3), "weight_hh": (20, 5), "bias_ih": (20,), "bias_hh": (20,)}


def test_default_init_bounds_and_flat_weights_follow_assignment():
    m = nn.GRU(5, 16, num_layers=2)
    for p in m.parameters():
        a = npy(p)
        assert a.min() >= -0.25 and a.max() <= 0.25 and a.std() > 0.1
    new = nn.Parameter(fb.zeros(48, 16))
    m.weight_hh_l1 = new
    assert m._flat_weights[m._flat_weights_names.index("weight_hh_l1")] is new
    m.flatten_parameters()  # a no-op


def test_state_dict_round_trip_and_pickle():
    a, b = make(nn.LSTM, 3, 4, num_layers=2), nn.LSTM(3, 4, num_layers=2).double()
    b.load_state_dict(a.state_dict())
    x = t(RNG.standard_normal((2, 1, 3)))
    np.testing.assert_array_equal(npy(a(x)[0]), npy(b(x)[0]))
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(npy(c(x)[0]), npy(a(x)[0]))


def test_repr():
    assert repr(nn.LSTM(10, 20)) == "LSTM(10, 20)"
    assert repr(nn.LSTM(10, 20, 2, bias=False, batch_first=True, dropout=0.5, bidirectional=True, proj_size=3)) == (
        "LSTM(10, 20, proj_size=3, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)")
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"
    assert repr(nn.GRU(3, 4, num_layers=3)) == "GRU(3, 4, num_layers=3)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu", bias=False)) == "RNNCell(3, 4, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    assert repr(nn.GRUCell(3, 4, bias=False)) == "GRUCell(3, 4, bias=False)"


def test_constructor_errors():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(3, 4, num_layers=0)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.LSTM(3, 4.0)
    for kind in ("RNN", "LSTM", "GRU"):  # PyTorch checks the input's size first
        with pytest.raises(ValueError, match="input_size must be greater than zero"):
            getattr(nn, kind)(0, 4.0)
        with pytest.raises(TypeError, match="input_size should be of type int, got: float"):
            getattr(nn, kind)(3.0, 0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


def test_forward_errors():
    m = nn.LSTM(64, 20, num_layers=2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 64, got 32"):
        m(fb.zeros(5, 3, 32))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 3, 20\), got \[1, 3, 20\]"):
        m(fb.zeros(5, 3, 64), (fb.zeros(1, 3, 20), fb.zeros(2, 3, 20)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 3, 20\), got \[2, 3, 21\]"):
        m(fb.zeros(5, 3, 64), (fb.zeros(2, 3, 20), fb.zeros(2, 3, 21)))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        m(fb.zeros(5, 3, 1, 64))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D but got"):
        m(fb.zeros(5, 3, 64), (fb.zeros(3, 20), fb.zeros(3, 20)))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        m(fb.zeros(0, 3, 64))
    out, (h, _) = m(fb.zeros(2, 0, 64))  # an empty batch is fine
    assert tuple(out.shape) == (2, 0, 20) and tuple(h.shape) == (2, 0, 20)
    r = nn.GRU(10, 20, num_layers=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 3, 20\), got \[1, 3, 20\]"):
        r(fb.zeros(5, 3, 10), fb.zeros(1, 3, 20))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        r(fb.zeros(5, 10), fb.zeros(2, 1, 20))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor instead"):
        nn.RNN(10, 20)(fb.zeros(10))
    with pytest.raises(ValueError, match=r"RNN input dtype \(flambeau.float64\) does not match weight dtype "
                                         r"\(flambeau.float32\). Convert input: input.to\(flambeau.float32\), or "
                                         r"convert model: model.to\(flambeau.float64\)"):
        r(fb.zeros(5, 3, 10, dtype=fb.float64))


# -- cells --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_reference(bias):
    x, h, c = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    for nl in ("tanh", "relu"):
        cell = make(nn.RNNCell, 4, 5, bias=bias, nonlinearity=nl)
        ws = [npy(p) for p in (cell.weight_ih, cell.weight_hh)] + (
            [npy(cell.bias_ih), npy(cell.bias_hh)] if bias else [None, None])
        np.testing.assert_allclose(npy(cell(t(x), t(h))), ref_rnn_cell(x, h, *ws, nl), rtol=1e-12, atol=1e-13)
    cell = make(nn.LSTMCell, 4, 5, bias=bias)
    ws = [npy(cell.weight_ih), npy(cell.weight_hh)] + ([npy(cell.bias_ih), npy(cell.bias_hh)] if bias else [None, None])
    hy, cy = cell(t(x), (t(h), t(c)))
    h2, c2 = ref_lstm_cell(x, h, c, *ws)
    np.testing.assert_allclose(npy(hy), h2, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(npy(cy), c2, rtol=1e-12, atol=1e-13)
    hy1, cy1 = cell(t(x[0]), (t(h[0]), t(c[0])))  # unbatched
    np.testing.assert_allclose(npy(hy1), h2[0], rtol=1e-12, atol=1e-13)
    cell = make(nn.GRUCell, 4, 5, bias=bias)
    ws = [npy(cell.weight_ih), npy(cell.weight_hh)] + ([npy(cell.bias_ih), npy(cell.bias_hh)] if bias else [None, None])
    np.testing.assert_allclose(npy(cell(t(x), t(h))), ref_gru_cell(x, h, *ws), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(npy(cell(t(x))), ref_gru_cell(x, 0 * h, *ws), rtol=1e-12, atol=1e-13)
    assert tuple(cell(t(x[1])).shape) == (5,)


def test_cells_gradcheck():
    x, h, c = (t(RNG.standard_normal(s), requires_grad=True) for s in ((2, 3), (2, 4), (2, 4)))
    lstm, gru, rnn = make(nn.LSTMCell, 3, 4), make(nn.GRUCell, 3, 4), make(nn.RNNCell, 3, 4)
    assert gradcheck(lambda a, b, d: lstm(a, (b, d)), (x, h, c))
    assert gradcheck(lambda a, b: gru(a, b), (x, h))
    assert gradcheck(lambda a, b: rnn(a, b), (x, h))
    assert gradcheck(lambda a, *ps: lstm(a, (h, c)), (x,) + tuple(lstm.parameters()))
    assert gradgradcheck(lambda a, b, d: lstm(a, (b, d)), (x, h, c))


def test_cell_errors():
    cell = nn.LSTMCell(3, 4)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        cell(fb.zeros(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        cell(fb.zeros(2, 3), (fb.zeros(3, 4), fb.zeros(3, 4)))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 5, expected 4"):
        cell(fb.zeros(2, 3), (fb.zeros(2, 4), fb.zeros(2, 5)))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D instead"):
        cell(fb.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="GRUCell: Expected hidden to be 1D or 2D, got 3D instead"):
        nn.GRUCell(3, 4)(fb.zeros(2, 3), fb.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expected 4"):
        nn.RNNCell(3, 4)(fb.zeros(2, 3), fb.zeros(2, 5))


# -- nn.utils.rnn ----------------------------------------------------------------------------------------------

def test_pack_padded_sequence_layout():
    x = fb.arange(12.).reshape(4, 3)  # (T=4, B=3)
    p = pack_padded_sequence(x, [4, 2, 1])
    assert p.data.tolist() == [0, 1, 2, 3, 4, 6, 9]
    assert p.batch_sizes.tolist() == [3, 2, 1, 1] and p.batch_sizes.dtype == fb.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    q = pack_padded_sequence(x.t(), fb.tensor([1, 4, 2]), batch_first=True, enforce_sorted=False)
    assert q.sorted_indices.tolist() == [1, 2, 0] and q.unsorted_indices.tolist() == [2, 0, 1]
    assert q.data.tolist() == [1, 2, 0, 4, 5, 7, 10]
    padded, lengths = pad_packed_sequence(q, batch_first=True, padding_value=-1.0, total_length=5)
    assert lengths.tolist() == [1, 4, 2]
    assert padded.tolist() == [[0, -1, -1, -1, -1], [1, 4, 7, 10, -1], [2, 5, -1, -1, -1]]


def test_pack_errors():
    x = fb.zeros(4, 3)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when "
                                           "`enforce_sorted` is True. You can pass `enforce_sorted=False`"):
        pack_padded_sequence(x, [1, 4, 2])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 "
                                           r"\(batch_size=3\)"):
        pack_padded_sequence(x, [4, 2])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [4, 2, 0])
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor, but got 2D"):
        pack_padded_sequence(x, fb.ones(1, 3, dtype=fb.int64))
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest sequence "
                                         "in input, but got total_length=2 and max sequence length being 4"):
        pad_packed_sequence(pack_padded_sequence(x, [4, 2, 1]), total_length=2)
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, but got middle."):
        pad_sequence([fb.zeros(2)], padding_side="middle")


def test_pad_sequence_sides():
    a, b = fb.tensor([1., 2., 3.]), fb.tensor([4.])
    assert pad_sequence([a, b]).tolist() == [[1, 4], [2, 0], [3, 0]]
    assert pad_sequence([a, b], batch_first=True, padding_value=9, padding_side="left").tolist() == [
        [1, 2, 3], [9, 9, 4]]


def test_packed_sequence_class():
    p = pack_sequence([fb.tensor([1., 2.]), fb.tensor([3.])])
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    d = p.double()
    assert d.data.dtype == fb.float64 and d.batch_sizes is p.batch_sizes
    assert p.to(fb.float32) is p
    assert not p.is_cuda
    q = PackedSequence((p.data, p.batch_sizes))
    assert q.data is p.data and q.sorted_indices is None
    assert repr(p).startswith("PackedSequence(data=tensor([1., 3., 2.]), batch_sizes=tensor([2, 1])")


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=5), feat=st.integers(1, 3),
       batch_first=st.booleans())
def test_pack_pad_round_trip(lengths, feat, batch_first):
    seqs = [fb.tensor(RNG.standard_normal((n, feat))) for n in lengths]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert int(packed.batch_sizes.sum()) == sum(lengths) == packed.data.shape[0]
    assert packed.batch_sizes.tolist() == [sum(n > s for n in lengths) for s in range(max(lengths))]
    back = unpack_sequence(packed)
    for a, b in zip(back, seqs):
        assert a.tolist() == b.tolist()
    padded = pad_sequence(seqs, batch_first=batch_first)
    for a, b in zip(unpad_sequence(padded, fb.tensor(lengths), batch_first=batch_first), seqs):
        assert a.tolist() == b.tolist()
    repacked = pack_padded_sequence(padded, lengths, batch_first=batch_first, enforce_sorted=False)
    assert repacked.data.tolist() == packed.data.tolist()
    again, lens = pad_packed_sequence(repacked, batch_first=batch_first)
    assert lens.tolist() == lengths
    assert again.tolist() == padded.tolist()


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("dtype", [fb.float16, fb.bfloat16])
def test_layer_half_precision(cls, dtype):
    # the layer kernels compute half inputs in float32 working arrays and store back
    m = make(cls, 3, 4, bidirectional=True, dtype=dtype)
    x = RNG.standard_normal((5, 2, 3))
    xh = t(x, dtype).requires_grad_()
    out, _ = m(xh)
    assert out.dtype == dtype
    ref_m = make(cls, 3, 4, bidirectional=True)
    ref_m.load_state_dict({k: v.double() for k, v in m.state_dict().items()})
    np.testing.assert_allclose(npy(out.float()), ref_layers(ref_m, npy(xh.float()))[0], atol=5e-2)
    out.float().sum().backward()
    assert xh.grad.dtype == dtype and np.isfinite(npy(xh.grad.float())).all()

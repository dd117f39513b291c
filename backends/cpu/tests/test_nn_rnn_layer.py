"""The whole-layer recurrent kernels (csrc/nn_rnn_layer.cpp, packed_gemm.h) against numpy references.

The conformance cases cover tiny layers; these use sizes that fill and overrun the packed product's
6-row by 16-column tiles (hidden 16 and 21, batches of 1 to 13), packed batches in both directions,
float32/float64 and float16 (computed in float32), and the C++ argument checks.
"""
from __future__ import annotations

import numpy as np
import pytest

from flambeau_cpu import _C
from flambeau_cpu.kernels import nn_rnn as K

pytestmark = pytest.mark.skipif(not hasattr(_C, "nn_lstm_layer"), reason="extension built without the layer kernels")


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _order(sizes, reverse):
    return range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))


def _offsets(sizes):
    return np.cumsum((0,) + tuple(sizes))[:-1]


def _lstm_ref(x, h0, c0, w, sizes, reverse):
    """Forward and BPTT written out in float64: outputs, final states, and a backward closure."""
    h, c = h0.astype(np.float64).copy(), c0.astype(np.float64).copy()
    hidden = h.shape[1]
    offs = _offsets(sizes)
    out, cells = np.zeros((x.shape[0], hidden)), np.zeros((x.shape[0], hidden))
    tape = []
    for t in _order(sizes, reverse):
        bs, off = sizes[t], offs[t]
        g = x[off:off + bs] + h[:bs] @ w.T
        i, f, gg, o = _sig(g[:, :hidden]), _sig(g[:, hidden:2 * hidden]), np.tanh(g[:, 2 * hidden:3 * hidden]), \
            _sig(g[:, 3 * hidden:])
        cy = f * c[:bs] + i * gg
        hy = o * np.tanh(cy)
        tape.append((t, bs, off, h[:bs].copy(), c[:bs].copy(), i, f, gg, o, cy))
        out[off:off + bs], cells[off:off + bs] = hy, cy
        h[:bs], c[:bs] = hy, cy

    def backward(gout, ghn, gcn):
        dh, dc = ghn.astype(np.float64).copy(), gcn.astype(np.float64).copy()
        gx, gw = np.zeros_like(x, dtype=np.float64), np.zeros_like(w, dtype=np.float64)
        for _t, bs, off, hp, cp, i, f, gg, o, cy in reversed(tape):
            dht = dh[:bs] + gout[off:off + bs]
            tc = np.tanh(cy)
            dct = dc[:bs] + dht * o * (1 - tc * tc)
            dg = np.concatenate([dct * gg * i * (1 - i), dct * cp * f * (1 - f), dct * i * (1 - gg * gg),
                                 dht * tc * o * (1 - o)], 1)
            gx[off:off + bs] = dg
            gw += dg.T @ hp
            dh[:bs] = dg @ w
            dc[:bs] = dct * f
        return gx, dh, dc, gw

    return (out, h, c, cells), backward


def _gru_ref(x, h0, w, b, sizes, reverse):
    h = h0.astype(np.float64).copy()
    hidden = h.shape[1]
    offs = _offsets(sizes)
    out = np.zeros((x.shape[0], hidden))
    tape = []
    for t in _order(sizes, reverse):
        bs, off = sizes[t], offs[t]
        hg = h[:bs] @ w.T + (b if b is not None else 0)
        ig = x[off:off + bs]
        r = _sig(ig[:, :hidden] + hg[:, :hidden])
        z = _sig(ig[:, hidden:2 * hidden] + hg[:, hidden:2 * hidden])
        hn = hg[:, 2 * hidden:]
        n = np.tanh(ig[:, 2 * hidden:] + r * hn)
        hy = n + z * (h[:bs] - n)
        tape.append((bs, off, h[:bs].copy(), r, z, n, hn))
        out[off:off + bs] = hy
        h[:bs] = hy

    def backward(gout, ghn):
        dh = ghn.astype(np.float64).copy()
        gx, gw, gb = np.zeros_like(x, dtype=np.float64), np.zeros_like(w, dtype=np.float64), np.zeros(3 * hidden)
        for bs, off, hp, r, z, n, hn in reversed(tape):
            g = dh[:bs] + gout[off:off + bs]
            dn = g * (1 - z) * (1 - n * n)
            dz = g * (hp - n) * z * (1 - z)
            dr = dn * hn * r * (1 - r)
            gx[off:off + bs] = np.concatenate([dr, dz, dn], 1)
            dhg = np.concatenate([dr, dz, dn * r], 1)
            gw += dhg.T @ hp
            gb += dhg.sum(0)
            dh[:bs] = dhg @ w + g * z
        return gx, dh, gw, gb

    return (out, h), backward


CASES = [  # (batch, hidden, batch_sizes, reverse)
    (13, 16, (13, 13, 13), False),    # two full row tiles and a remainder of 1, whole panels
    (13, 21, (13, 12, 7, 7, 1), False),  # packed: every row remainder, a partial last panel
    (13, 21, (13, 12, 7, 7, 1), True),
    (5, 3, (5, 0), True),             # tiny, with an empty step
    (1, 40, (1, 1, 1, 1), False),
]

TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _data(rng, batch, hidden, sizes, gates, dtype):
    n = sum(sizes)
    x = rng.standard_normal((n, gates * hidden)).astype(dtype)
    h0 = rng.standard_normal((batch, hidden)).astype(dtype)
    c0 = rng.standard_normal((batch, hidden)).astype(dtype)
    w = (rng.uniform(-1, 1, (gates * hidden, hidden)) / np.sqrt(hidden)).astype(dtype)
    return n, x, h0, c0, w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,hidden,sizes,reverse", CASES)
def test_lstm_layer_forward_and_backward(dtype, batch, hidden, sizes, reverse):
    rng = np.random.default_rng(hidden * 100 + batch)
    n, x, h0, c0, w = _data(rng, batch, hidden, sizes, 4, dtype)
    (out, hn, cn, cells), backward = _lstm_ref(x, h0, c0, w, sizes, reverse)
    res = [np.empty(s, dtype) for s in ((n, hidden), (batch, hidden), (batch, hidden), (n, 4 * hidden), (n, hidden))]
    K.nn_lstm_layer(x, h0, c0, w, sizes, reverse, res)
    for got, want in zip((res[0], res[1], res[2], res[4]), (out, hn, cn, cells)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(dtype)
    grads = [np.empty(s, dtype) for s in ((n, 4 * hidden), (batch, hidden), (batch, hidden), (4 * hidden, hidden))]
    K.nn_lstm_layer_backward(gout, ghn, gcn, h0, c0, w, res[0], res[3], res[4], sizes, reverse, grads)
    for got, want in zip(grads, backward(gout, ghn, gcn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    # absent output gradients count as zeros
    K.nn_lstm_layer_backward(None, None, None, h0, c0, w, res[0], res[3], res[4], sizes, reverse, grads)
    zeros = np.zeros((batch, hidden))
    for got, want in zip(grads, backward(np.zeros((n, hidden)), zeros, zeros)):
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch,hidden,sizes,reverse", CASES)
def test_gru_layer_forward_and_backward(dtype, bias, batch, hidden, sizes, reverse):
    rng = np.random.default_rng(hidden * 100 + batch + 1)
    n, x, h0, _, w = _data(rng, batch, hidden, sizes, 3, dtype)
    b = rng.standard_normal(3 * hidden).astype(dtype) if bias else None
    (out, hn), backward = _gru_ref(x, h0, w, b, sizes, reverse)
    res = [np.empty(s, dtype) for s in ((n, hidden), (batch, hidden), (n, 4 * hidden))]
    K.nn_gru_layer(x, h0, w, b, sizes, reverse, res)
    np.testing.assert_allclose(res[0], out, **TOL[dtype])
    np.testing.assert_allclose(res[1], hn, **TOL[dtype])
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn = rng.standard_normal((batch, hidden)).astype(dtype)
    grads = [np.empty(s, dtype) for s in ((n, 3 * hidden), (batch, hidden), (3 * hidden, hidden), (3 * hidden,))]
    K.nn_gru_layer_backward(gout, ghn, h0, w, res[0], res[2], sizes, reverse, grads)
    for got, want in zip(grads, backward(gout, ghn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])


def test_lstm_layer_float16_computes_in_float32():
    rng = np.random.default_rng(3)
    n, x, h0, c0, w = _data(rng, 7, 18, (7, 7, 5), 4, np.float16)
    (out, hn, cn, cells), _ = _lstm_ref(x.astype(np.float32), h0.astype(np.float32), c0.astype(np.float32),
                                       w.astype(np.float32), (7, 7, 5), False)
    res = [np.empty(s, np.float16) for s in ((n, 18), (7, 18), (7, 18), (n, 72), (n, 18))]
    K.nn_lstm_layer(x, h0, c0, w, (7, 7, 5), False, res)
    np.testing.assert_allclose(res[0].astype(np.float32), out, rtol=2e-3, atol=2e-3)


def _lstm_args(batch=2, hidden=3, sizes=(2, 2), dtype=np.float32):
    n = sum(sizes)
    x = np.zeros((n, 4 * hidden), dtype)
    st = np.zeros((batch, hidden), dtype)
    w = np.zeros((4 * hidden, hidden), dtype)
    outs = [np.empty(s, dtype) for s in ((n, hidden), (batch, hidden), (batch, hidden), (n, 4 * hidden), (n, hidden))]
    return [x, st, st.copy(), w, list(sizes), False, *outs, batch, hidden, K._gemm(np.dtype(dtype))]


@pytest.mark.parametrize("index,value,error,match", [
    (4, [2, 3], ValueError, "non-increasing"),          # sizes grow
    (4, [3, 1], ValueError, "within"),                  # more sequences than the state holds
    (4, [-1, 1], ValueError, "non-increasing"),
    (4, [2, 1], ValueError, "elements, expected"),      # rows do not match xproj
    (3, np.zeros((3, 3), np.float32), ValueError, "w_hh has 9 elements"),
    (1, np.zeros((2, 3), np.float64), TypeError, "wrong dtype"),
    (6, np.empty((4, 6), np.float32)[:, ::2], ValueError, "C-contiguous"),
    (13, None, TypeError, "capsule"),
])
def test_lstm_layer_checks_before_touching_memory(index, value, error, match):
    args = _lstm_args()
    args[index] = value
    with pytest.raises(error, match=match):
        _C.nn_lstm_layer(*args)


def test_layer_refuses_a_capsule_of_the_wrong_precision():
    args = _lstm_args()
    args[-1] = K._gemm(np.dtype(np.float64))
    with pytest.raises(TypeError, match="not a sgemm"):
        _C.nn_lstm_layer(*args)
    from scipy.linalg import cython_blas

    args[-1] = cython_blas.__pyx_capi__["sgemv"]
    with pytest.raises(TypeError, match="not a sgemm"):
        _C.nn_lstm_layer(*args)


def _rnn_ref(x, h0, w, sizes, reverse, relu):
    h = h0.astype(np.float64).copy()
    offs = _offsets(sizes)
    out = np.zeros((x.shape[0], h.shape[1]))
    tape = []
    for t in _order(sizes, reverse):
        bs, off = sizes[t], offs[t]
        pre = x[off:off + bs] + h[:bs] @ w.T
        y = np.maximum(pre, 0) if relu else np.tanh(pre)
        tape.append((bs, off, h[:bs].copy(), y))
        out[off:off + bs] = h[:bs] = y

    def backward(gout, ghn):
        dh = ghn.astype(np.float64).copy()
        gx, gw = np.zeros(x.shape), np.zeros(w.shape)
        for bs, off, hp, y in reversed(tape):
            g = dh[:bs] + gout[off:off + bs]
            d = g * (y > 0) if relu else g * (1 - y * y)
            gx[off:off + bs] = d
            gw += d.T @ hp
            dh[:bs] = d @ w
        return gx, dh, gw

    return (out, h), backward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("batch,hidden,sizes,reverse", CASES)
def test_rnn_layer_forward_and_backward(dtype, relu, batch, hidden, sizes, reverse):
    rng = np.random.default_rng(hidden * 100 + batch + 2)
    n, x, h0, _, w = _data(rng, batch, hidden, sizes, 1, dtype)
    (out, hn), backward = _rnn_ref(x, h0, w, sizes, reverse, relu)
    res = [np.empty(s, dtype) for s in ((n, hidden), (batch, hidden))]
    K.nn_rnn_layer(x, h0, w, sizes, reverse, relu, res)
    np.testing.assert_allclose(res[0], out, **TOL[dtype])
    np.testing.assert_allclose(res[1], hn, **TOL[dtype])
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn = rng.standard_normal((batch, hidden)).astype(dtype)
    grads = [np.empty(s, dtype) for s in ((n, hidden), (batch, hidden), (hidden, hidden))]
    K.nn_rnn_layer_backward(gout, ghn, h0, w, res[0], sizes, reverse, relu, grads)
    for got, want in zip(grads, backward(gout, ghn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])


def test_rnn_layer_checks_sizes():
    x, h0, w = np.zeros((4, 3), np.float32), np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32)
    out, hn = np.empty((4, 3), np.float32), np.empty((2, 3), np.float32)
    _C.nn_rnn_layer(x, h0, w, [2, 2], False, False, out, hn, 2, 3)
    with pytest.raises(ValueError, match="xproj has 12 elements, expected 15"):
        _C.nn_rnn_layer(x, h0, w, [2, 2, 1], False, False, np.empty((5, 3), np.float32), hn, 2, 3)
    with pytest.raises(ValueError, match="output has 6 elements"):
        _C.nn_rnn_layer(x, h0, w, [2, 2], False, False, np.empty((2, 3), np.float32), hn, 2, 3)
    with pytest.raises(ValueError, match="bad sizes"):
        _C.nn_rnn_layer(x, h0, w, [2, 2], False, False, out, hn, 2, -3)


def test_lstm_layer_large_enough_to_split_across_threads():
    """(64, 128) @ (128, 512) step products: the sequences are split across the team (2 threads where
    the machine has them); the result must not depend on the split."""
    import flambeau as fb

    before = fb.get_num_threads()
    fb.set_num_threads(2)
    try:
        rng = np.random.default_rng(7)
        sizes = (64, 64, 50, 3)
        n, x, h0, c0, w = _data(rng, 64, 128, sizes, 4, np.float32)
        (out, hn, cn, cells), backward = _lstm_ref(x, h0, c0, w, sizes, True)
        res = [np.empty(s, np.float32) for s in ((n, 128), (64, 128), (64, 128), (n, 512), (n, 128))]
        K.nn_lstm_layer(x, h0, c0, w, sizes, True, res)
        for got, want in zip((res[0], res[1], res[2], res[4]), (out, hn, cn, cells)):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
        gout = rng.standard_normal((n, 128)).astype(np.float32)
        ghn, gcn = rng.standard_normal((2, 64, 128)).astype(np.float32)
        grads = [np.empty(s, np.float32) for s in ((n, 512), (64, 128), (64, 128), (512, 128))]
        K.nn_lstm_layer_backward(gout, ghn, gcn, h0, c0, w, res[0], res[3], res[4], sizes, True, grads)
        for got, want in zip(grads, backward(gout, ghn, gcn)):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    finally:
        fb.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sizes,reverse", [((24, 24, 24), False), ((24, 20, 9, 9, 2), False),
                                           ((24, 20, 9, 9, 2), True)])
def test_lstm_layer_same_result_for_any_team(dtype, sizes, reverse):
    """One thread runs the unit split's loops; 2 and 3 threads split the 24 sequences (12 or 8 rows each,
    uneven steps where the packed sizes end inside a thread's rows). Every element is summed in the same
    order whichever thread computes it and through whichever packing of the weight, so the step loops'
    results are bitwise those of one thread; the weight's gradient is one BLAS product, compared with a
    tolerance."""
    import flambeau as fb

    batch, hidden = 24, 72
    rng = np.random.default_rng(11)
    n, x, h0, c0, w = _data(rng, batch, hidden, sizes, 4, dtype)
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(dtype)
    before = fb.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            fb.set_num_threads(threads)
            res = [np.full(s, np.nan, dtype) for s in ((n, hidden), (batch, hidden), (batch, hidden), (n, 4 * hidden),
                                                       (n, hidden))]
            K.nn_lstm_layer(x, h0, c0, w, sizes, reverse, res)
            grads = [np.full(s, np.nan, dtype) for s in ((n, 4 * hidden), (batch, hidden), (batch, hidden),
                                                         (4 * hidden, hidden))]
            K.nn_lstm_layer_backward(gout, ghn, gcn, h0, c0, w, res[0], res[3], res[4], sizes, reverse, grads)
            results.append((res, grads))
    finally:
        fb.set_num_threads(before)
    (out, hn, cn, cells), backward = _lstm_ref(x, h0, c0, w, sizes, reverse)
    res1, grads1 = results[0]
    for got, want in zip((res1[0], res1[1], res1[2], res1[4]), (out, hn, cn, cells)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for got, want in zip(grads1, backward(gout, ghn, gcn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for res, grads in results[1:]:
        for got, want in zip(res + grads[:3], res1 + grads1[:3]):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(grads[3], grads1[3], **TOL[dtype])


@pytest.mark.parametrize("sizes,reverse", [((17, 17, 17), False), ((17, 16, 9, 8, 8, 1), False),
                                           ((17, 16, 9, 8, 8, 1), True)])
def test_lstm_layer_unit_split_matches_row_split(sizes, reverse):
    """17 sequences on 2 threads split the rows (8 and 9); with 15 the threads split the hidden units
    instead (7 rows each would be under the row split's least). Both splits give one thread's bits."""
    import flambeau as fb

    hidden = 40
    rng = np.random.default_rng(5)
    before = fb.get_num_threads()
    try:
        for batch in (17, 15):
            sz = tuple(min(s, batch) for s in sizes)
            n, x, h0, c0, w = _data(rng, batch, hidden, sz, 4, np.float32)
            gout = rng.standard_normal((n, hidden)).astype(np.float32)
            ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(np.float32)
            runs = []
            for threads in (1, 2):
                fb.set_num_threads(threads)
                res = [np.full(s, np.nan, np.float32) for s in ((n, hidden), (batch, hidden), (batch, hidden),
                                                                (n, 4 * hidden), (n, hidden))]
                K.nn_lstm_layer(x, h0, c0, w, sz, reverse, res)
                grads = [np.full(s, np.nan, np.float32) for s in ((n, 4 * hidden), (batch, hidden), (batch, hidden),
                                                                  (4 * hidden, hidden))]
                K.nn_lstm_layer_backward(gout, ghn, gcn, h0, c0, w, res[0], res[3], res[4], sz, reverse, grads)
                runs.append(res + grads[:3])
            for got, want in zip(runs[1], runs[0]):
                np.testing.assert_array_equal(got, want)
    finally:
        fb.set_num_threads(before)

"""The whole-layer recurrent kernels (csrc/nn_rnn_layer.cpp, packed_gemm.h) against numpy references.

The conformance cases cover tiny layers; these use sizes that fill and overrun the packed product's
tiles (hidden 16 and 21, batches of 1 to 13, LSTM inputs of 5 to 40), packed batches in both
directions, weight gradients summed over more rows than one block of at_b_gemm.h's tile,
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


def _lstm_data(rng, batch, hidden, sizes, inputs, dtype, bias=True):
    """An LSTM layer's arguments: (input (N, I), h0, c0, w_ih, w_hh, b_ih, b_hh), biases None without bias."""
    n = sum(sizes)
    x = rng.standard_normal((n, inputs)).astype(dtype)
    h0, c0 = rng.standard_normal((2, batch, hidden)).astype(dtype)
    w_ih = (rng.uniform(-1, 1, (4 * hidden, inputs)) / np.sqrt(max(inputs, 1))).astype(dtype)
    w_hh = (rng.uniform(-1, 1, (4 * hidden, hidden)) / np.sqrt(hidden)).astype(dtype)
    b_ih, b_hh = rng.uniform(-1, 1, (2, 4 * hidden)).astype(dtype) if bias else (None, None)
    return x, h0, c0, w_ih, w_hh, b_ih, b_hh


def _lstm_full_ref(x, h0, c0, w_ih, w_hh, b_ih, b_hh, sizes, reverse):
    """_lstm_ref with the input's projection: outputs, and a backward closure giving
    (grad_input, grad_h0, grad_c0, grad_w_ih, grad_w_hh, grad_bias)."""
    x64 = x.astype(np.float64)
    xproj = x64 @ w_ih.astype(np.float64).T
    for b in (b_ih, b_hh):
        if b is not None:
            xproj = xproj + b
    outs, gates_backward = _lstm_ref(xproj, h0, c0, w_hh.astype(np.float64), sizes, reverse)

    def backward(gout, ghn, gcn):
        dg, dh, dc, gw = gates_backward(gout, ghn, gcn)
        return dg @ w_ih.astype(np.float64), dh, dc, dg.T @ x64, gw, dg.sum(0)

    return outs, backward


def _lstm_outputs(n, batch, hidden, dtype, fill=np.nan):
    return [np.full(s, fill, dtype) for s in ((n, hidden), (batch, hidden), (batch, hidden), (n, 4 * hidden),
                                              (n, hidden))]


def _lstm_grads(n, batch, hidden, inputs, dtype, mask=(True,) * 6):
    shapes = ((n, inputs), (batch, hidden), (batch, hidden), (4 * hidden, inputs), (4 * hidden, hidden), (4 * hidden,))
    return [np.full(s if m or i in (1, 2) else (0,), np.nan, dtype) for i, (s, m) in enumerate(zip(shapes, mask))]


def _run_lstm(args, sizes, reverse, gout, ghn, gcn, mask=(True,) * 6):
    """The forward and backward kernels: (forward outputs, gradients)."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = args
    n, (batch, hidden), dtype = x.shape[0], h0.shape, x.dtype
    res = _lstm_outputs(n, batch, hidden, dtype)
    K.nn_lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, sizes, reverse, res)
    grads = _lstm_grads(n, batch, hidden, x.shape[1], dtype, mask)
    K.nn_lstm_layer_backward(gout, ghn, gcn, x, h0, c0, w_ih, w_hh, res[0], res[3], res[4], sizes, reverse, mask,
                             grads)
    return res, grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("inputs", [5, 16])
@pytest.mark.parametrize("batch,hidden,sizes,reverse", CASES)
def test_lstm_layer_forward_and_backward(dtype, inputs, batch, hidden, sizes, reverse):
    rng = np.random.default_rng(hidden * 100 + batch)
    args = _lstm_data(rng, batch, hidden, sizes, inputs, dtype, bias=inputs == 5)
    n = sum(sizes)
    (out, hn, cn, cells), backward = _lstm_full_ref(*args, sizes, reverse)
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(dtype)
    res, grads = _run_lstm(args, sizes, reverse, gout, ghn, gcn)
    for got, want in zip((res[0], res[1], res[2], res[4]), (out, hn, cn, cells)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for got, want in zip(grads, backward(gout, ghn, gcn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    # absent output gradients count as zeros
    _, grads = _run_lstm(args, sizes, reverse, None, None, None)
    zeros = np.zeros((batch, hidden))
    for got, want in zip(grads, backward(np.zeros((n, hidden)), zeros, zeros)):
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_layer_long_sums(dtype):
    """Weight gradients summed over more rows than one block of the A^T B tile (256), 4H not a multiple
    of its 16 rows, I and H not multiples of a panel's columns."""
    rng = np.random.default_rng(9)
    batch, hidden, inputs = 3, 21, 19
    sizes = (3,) * 90 + (2,) * 30 + (1,) * 7
    args = _lstm_data(rng, batch, hidden, sizes, inputs, dtype)
    n = sum(sizes)
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(dtype)
    _, backward = _lstm_full_ref(*args, sizes, False)
    _, grads = _run_lstm(args, sizes, False, gout, ghn, gcn)
    for got, want in zip(grads, backward(gout, ghn, gcn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("mask", [(False, True, True, False, False, False), (True, False, False, False, True, False),
                                  (False, True, True, True, False, True)])
def test_lstm_layer_backward_output_mask(mask):
    """Masked-off gradients come back empty and are not computed; the states' always are."""
    rng = np.random.default_rng(2)
    sizes = (4, 4, 3)
    args = _lstm_data(rng, 4, 6, sizes, 5, np.float64)
    gout = rng.standard_normal((11, 6))
    _, full = _run_lstm(args, sizes, False, gout, None, None)
    _, grads = _run_lstm(args, sizes, False, gout, None, None, mask)
    for i, (got, want) in enumerate(zip(grads, full)):
        if mask[i] or i in (1, 2):
            np.testing.assert_array_equal(got, want)
        else:
            assert got.shape == (0,)


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
    sizes = (7, 7, 5)
    args = _lstm_data(rng, 7, 18, sizes, 6, np.float16)
    (out, hn, cn, cells), _ = _lstm_full_ref(*[a.astype(np.float32) for a in args], sizes, False)
    res = _lstm_outputs(19, 7, 18, np.float16)
    K.nn_lstm_layer(*args, sizes, False, res)
    np.testing.assert_allclose(res[0].astype(np.float32), out, rtol=2e-3, atol=2e-3)


def _lstm_args(batch=2, hidden=3, sizes=(2, 2), inputs=5, dtype=np.float32):
    """_C.nn_lstm_layer's arguments (zeros) for the checks below."""
    n = sum(sizes)
    x = np.zeros((n, inputs), dtype)
    st = np.zeros((batch, hidden), dtype)
    w_ih, w_hh, b = np.zeros((4 * hidden, inputs), dtype), np.zeros((4 * hidden, hidden), dtype), np.zeros(4 * hidden,
                                                                                                           dtype)
    outs = _lstm_outputs(n, batch, hidden, dtype)
    return [x, st, st.copy(), w_ih, w_hh, b, b.copy(), list(sizes), False, *outs, batch, hidden, inputs]


@pytest.mark.parametrize("index,value,error,match", [
    (7, [2, 3], ValueError, "non-increasing"),          # sizes grow
    (7, [3, 1], ValueError, "within"),                  # more sequences than the state holds
    (7, [-1, 1], ValueError, "non-increasing"),
    (7, [2, 1], ValueError, "elements, expected"),      # rows do not match the input
    (3, np.zeros((12, 4), np.float32), ValueError, "w_ih has 48 elements"),
    (4, np.zeros((3, 3), np.float32), ValueError, "w_hh has 9 elements"),
    (5, np.zeros(11, np.float32), ValueError, "b_ih has 11 elements"),
    (1, np.zeros((2, 3), np.float64), TypeError, "wrong dtype"),
    (9, np.empty((4, 6), np.float32)[:, ::2], ValueError, "C-contiguous"),
    (16, -1, ValueError, "bad input size"),
    (16, 2 ** 31, ValueError, "bad input size"),
    (16, 6, ValueError, "input has 20 elements, expected 24"),
])
def test_lstm_layer_checks_before_touching_memory(index, value, error, match):
    args = _lstm_args()
    args[index] = value
    with pytest.raises(error, match=match):
        _C.nn_lstm_layer(*args)


def _lstm_backward_args(batch=2, hidden=3, sizes=(2, 2), inputs=5, dtype=np.float32):
    x, h0, c0, w_ih, w_hh, *_ = _lstm_args(batch, hidden, sizes, inputs, dtype)
    n = sum(sizes)
    out, cells, work = np.zeros((n, hidden), dtype), np.zeros((n, hidden), dtype), np.zeros((n, 4 * hidden), dtype)
    grads = _lstm_grads(n, batch, hidden, inputs, dtype)
    return [None, None, None, x, h0, c0, w_ih, w_hh, out, work, cells, list(sizes), False, *grads, batch, hidden,
            inputs, K._gemm(np.dtype(dtype))]


def test_lstm_layer_backward_checks_before_touching_memory():
    args = _lstm_backward_args()
    _C.nn_lstm_layer_backward(*args)
    for index, value, match in ((17, np.zeros((12, 4), np.float32), "grad_w_hh has 48 elements"),
                                (18, np.zeros(3, np.float32), "grad_bias has 3 elements"),
                                (14, None, "grad_h0 is required"),
                                (13, np.zeros((4, 4), np.float32), "grad_input has 16 elements"),
                                (9, np.zeros((4, 3), np.float32), "workspace has 12 elements")):
        bad = list(args)
        bad[index] = value
        with pytest.raises(ValueError, match=match):
            _C.nn_lstm_layer_backward(*bad)


def test_layer_refuses_a_capsule_of_the_wrong_precision():
    args = _lstm_backward_args()
    args[-1] = K._gemm(np.dtype(np.float64))
    with pytest.raises(TypeError, match="not a sgemm"):
        _C.nn_lstm_layer_backward(*args)
    from scipy.linalg import cython_blas

    args[-1] = cython_blas.__pyx_capi__["sgemv"]
    with pytest.raises(TypeError, match="not a sgemm"):
        _C.nn_lstm_layer_backward(*args)
    args[-1] = None
    with pytest.raises(TypeError, match="capsule"):
        _C.nn_lstm_layer_backward(*args)


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
    the machine has them)."""
    import flambeau as fb

    before = fb.get_num_threads()
    fb.set_num_threads(2)
    try:
        rng = np.random.default_rng(7)
        sizes = (64, 64, 50, 3)
        args = _lstm_data(rng, 64, 128, sizes, 40, np.float32)
        n = sum(sizes)
        (out, hn, cn, cells), backward = _lstm_full_ref(*args, sizes, True)
        gout = rng.standard_normal((n, 128)).astype(np.float32)
        ghn, gcn = rng.standard_normal((2, 64, 128)).astype(np.float32)
        res, grads = _run_lstm(args, sizes, True, gout, ghn, gcn)
        for got, want in zip((res[0], res[1], res[2], res[4]), (out, hn, cn, cells)):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
        for got, want in zip(grads, backward(gout, ghn, gcn)):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    finally:
        fb.set_num_threads(before)


def _runs_by_threads(thread_counts, args, sizes, reverse, gout, ghn, gcn):
    import flambeau as fb

    before = fb.get_num_threads()
    try:
        runs = []
        for threads in thread_counts:
            fb.set_num_threads(threads)
            runs.append(_run_lstm(args, sizes, reverse, gout, ghn, gcn))
        return runs
    finally:
        fb.set_num_threads(before)


def _avx512() -> bool:
    before = _C.set_avx512_paths(True)
    return _C.set_avx512_paths(before)  # whether True took: the CPU has AVX-512F


def _assert_same_run(run, first):
    """The outputs and the states' gradients bitwise equal: the step loops sum every element in the same
    order whichever thread computes it, and the input's projection splits panels. So are the weights'
    gradients on the A^T B tile (each element summed by one thread); BLAS's products (the input's
    gradient, and the weights' without AVX-512) are compared with a tolerance."""
    (res, grads), (res1, grads1) = run, first
    exact = res + grads[1:3] + (grads[3:] if _avx512() else [])
    want = res1 + grads1[1:3] + (grads1[3:] if _avx512() else [])
    for got, w in zip(exact, want):
        np.testing.assert_array_equal(got, w)
    for got, w in zip(grads, grads1):
        np.testing.assert_allclose(got, w, **TOL[got.dtype.type])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sizes,reverse", [((24, 24, 24), False), ((24, 20, 9, 9, 2), False),
                                           ((24, 20, 9, 9, 2), True)])
def test_lstm_layer_same_result_for_any_team(dtype, sizes, reverse):
    """One thread runs the unit split's loops; 2 and 3 threads split the 24 sequences (12 or 8 rows each,
    uneven steps where the packed sizes end inside a thread's rows): the same bits."""
    batch, hidden = 24, 72
    rng = np.random.default_rng(11)
    args = _lstm_data(rng, batch, hidden, sizes, 13, dtype)
    n = sum(sizes)
    gout = rng.standard_normal((n, hidden)).astype(dtype)
    ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(dtype)
    runs = _runs_by_threads((1, 2, 3), args, sizes, reverse, gout, ghn, gcn)
    (out, hn, cn, cells), backward = _lstm_full_ref(*args, sizes, reverse)
    res1, grads1 = runs[0]
    for got, want in zip((res1[0], res1[1], res1[2], res1[4]), (out, hn, cn, cells)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for got, want in zip(grads1, backward(gout, ghn, gcn)):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for run in runs[1:]:
        _assert_same_run(run, runs[0])


@pytest.mark.parametrize("sizes,reverse", [((17, 17, 17), False), ((17, 16, 9, 8, 8, 1), False),
                                           ((17, 16, 9, 8, 8, 1), True)])
def test_lstm_layer_unit_split_matches_row_split(sizes, reverse):
    """17 sequences on 2 threads split the rows (8 and 9); with 15 the threads split the hidden units
    instead (7 rows each would be under the row split's least). Both splits give one thread's bits."""
    hidden = 40
    rng = np.random.default_rng(5)
    for batch in (17, 15):
        sz = tuple(min(s, batch) for s in sizes)
        args = _lstm_data(rng, batch, hidden, sz, 24, np.float32)
        n = sum(sz)
        gout = rng.standard_normal((n, hidden)).astype(np.float32)
        ghn, gcn = rng.standard_normal((2, batch, hidden)).astype(np.float32)
        first, second = _runs_by_threads((1, 2), args, sz, reverse, gout, ghn, gcn)
        _assert_same_run(second, first)

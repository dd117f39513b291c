"""The packed convolution kernels (``_C.nn_conv_forward_packed``, ``nn_conv_input_grad_packed``,
``nn_conv_weight_grad_packed``: csrc/nn_conv_packed.cpp), called on numpy arrays.

Checked against reference windows (``test_nn_conv_kernels._ref_im2col``) over random geometries,
through each way the kernels copy windows (shifted for "same" convolutions, gathered from a table,
im2col_plane for the geometries too large for a table), each product tile (AVX-512 and the generic
256-bit one), one and two threads, both forward forms (a product per sample, the batch at once), and
products long enough to be summed in several slices of k.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flambeau_cpu import _C
from flambeau_cpu.kernels import nn_conv

from test_nn_conv_kernels import _args, _ref_im2col

pytestmark = pytest.mark.skipif(not hasattr(_C, "nn_conv_forward_packed"), reason="extension built without them")

RNG = np.random.default_rng(1)


@pytest.fixture
def paths():
    """Restores the thread count and the AVX-512 switch a test changes."""
    threads = _C.get_num_threads()
    avx = _C.set_avx512_paths(True)
    _C.set_avx512_paths(avx)
    yield
    _C.set_num_threads(threads)
    _C.set_avx512_paths(avx)


def _small(big, kernel, stride, pad, dil):
    return tuple((b + 2 * p - d * (k - 1) - 1) // s + 1 for b, k, s, p, d in zip(big, kernel, stride, pad, dil))


def _references(x, w, b, go, small, kernel, stride, pad, dil):
    """Forward, input gradient and weight gradient from reference windows (float64)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    cols = _ref_im2col(x.astype(np.float64), small, kernel, stride, pad, dil)  # (N, C, K, L)
    w3 = w.astype(np.float64).reshape(o, c, -1)
    out = np.einsum("ock,nckl->nol", w3, cols)
    if b is not None:
        out = out + b.astype(np.float64)[None, :, None]
    g3 = go.astype(np.float64).reshape(n, o, -1)
    back_cols = np.ascontiguousarray(np.einsum("ock,nol->nckl", w3, g3))
    gi = np.empty(x.shape, np.float64)  # col2im (tested against its adjoint) of W^T @ g
    _C.nn_col2im(back_cols, gi, n, c, False, *_args(x.shape[2:], small, kernel, stride, pad, dil))
    gw = np.einsum("nol,nckl->ock", g3, cols).reshape(w.shape)
    return out.reshape((n, o) + small), gi, gw


def _run(x, w, b, go, small, kernel, stride, pad, dil, batched):
    n, c = x.shape[:2]
    o = w.shape[0]
    geo = (n, c, o, *_args(x.shape[2:], small, kernel, stride, pad, dil))
    out = np.full((n, o) + small, np.nan, x.dtype)
    _C.nn_conv_forward_packed(x, w.reshape(o, -1), b, out, batched, *geo)
    gi = np.full(x.shape, np.nan, x.dtype)
    _C.nn_conv_input_grad_packed(go, np.ascontiguousarray(w.reshape(o, -1).T), gi, *geo)
    gw = np.full((o, w[0].size), np.nan, x.dtype)
    _C.nn_conv_weight_grad_packed(go, x, gw, *geo)
    return out, gi, gw.reshape(w.shape)


def _check(x, w, b, kernel, stride, pad, dil, batched):
    small = _small(x.shape[2:], kernel, stride, pad, dil)
    go = RNG.standard_normal((x.shape[0], w.shape[0]) + small).astype(x.dtype)
    got = _run(x, w, b, go, small, kernel, stride, pad, dil, batched)
    want = _references(x, w, b, go, small, kernel, stride, pad, dil)
    tol = 2e-4 if x.dtype == np.float32 else 1e-10
    for name, g, r in zip(("forward", "input grad", "weight grad"), got, want):
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * max(1.0, np.abs(r).max()), err_msg=name)


# `paths` restores the switches once, after every example (each example sets both itself)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(1, 3), n=st.integers(1, 3), c=st.integers(1, 5), o=st.integers(1, 30),
       dtype=st.sampled_from([np.float32, np.float64]), bias=st.booleans(), batched=st.booleans(),
       avx=st.booleans(), threads=st.sampled_from([1, 2]), same=st.booleans(), data=st.data())
def test_packed_kernels_match_reference_windows(k, n, c, o, dtype, bias, batched, avx, threads, same, data, paths):
    kernel = tuple(data.draw(st.integers(1, 4)) for _ in range(k))
    dil = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    if same:  # unit strides and the padding that keeps the size: the shifted copies
        kernel = tuple(kk | 1 for kk in kernel)
        stride, pad = (1,) * k, tuple(d * (kk - 1) // 2 for kk, d in zip(kernel, dil))
    else:
        stride = tuple(data.draw(st.integers(1, 4)) for _ in range(k))
        pad = tuple(data.draw(st.integers(0, 4)) for _ in range(k))
    big = tuple(data.draw(st.integers(1, 9 if k < 3 else 5)) for _ in range(k))
    big = tuple(max(b, d * (kk - 1) + 1 - 2 * p) for b, kk, d, p in zip(big, kernel, dil, pad))  # a non-empty output
    _C.set_num_threads(threads)
    _C.set_avx512_paths(avx)
    x = RNG.standard_normal((n, c) + big).astype(dtype)
    w = RNG.standard_normal((o, c) + kernel).astype(dtype)
    b = RNG.standard_normal(o).astype(dtype) if bias else None
    _check(x, w, b, kernel, stride, pad, dil, batched)


@pytest.mark.parametrize("avx", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    ((4, 32, 14, 14), 64, (3, 3), (1, 1), (1, 1)),   # the CNN's second layer: k = 288, two slices
    ((3, 40, 5, 7), 25, (3, 3), (2, 1), (1, 0)),     # k = 360, strided: gathered, two tiles and a rest
    ((2, 70, 4, 4), 13, (2, 2), (1, 1), (0, 0)),     # k = 280 over 9 positions
    ((2, 3, 33, 33), 8, (7, 7), (2, 2), (3, 3)),     # a ResNet stem: 289 positions, partial last panel
    ((2, 3, 41, 40), 7, (3, 3), (1, 1), (1, 1)),     # 1640 positions: four blocks of 512, shifted
    ((2, 2, 71, 70), 5, (3, 3), (2, 2), (1, 1)),     # 1260 positions: three blocks, gathered
])
def test_packed_kernels_long_sums_and_many_tiles(case, dtype, avx, paths):
    xs, o, kernel, stride, pad = case
    _C.set_avx512_paths(avx)
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal((o, xs[1]) + kernel).astype(dtype)
    b = RNG.standard_normal(o).astype(dtype)
    for batched in (False, True):
        _check(x, w, b, kernel, stride, pad, (1, 1), batched)


def test_packed_kernels_without_a_gather_table(paths):
    """A geometry whose table would pass 2**22 entries copies its windows with im2col_plane."""
    x = RNG.standard_normal((2, 1, 1_100_000)).astype(np.float32)
    w = RNG.standard_normal((3, 1, 5)).astype(np.float32)
    assert 5 * x.shape[-1] > 1 << 22
    for avx in (True, False):
        _C.set_avx512_paths(avx)
        _check(x, w, None, (5,), (1,), (1,), (1,), False)


def test_packed_kernels_check_sizes_dtypes_and_layouts():
    geo = (2, 3, 4, *_args((5, 5), (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)))
    x = np.zeros((2, 3, 5, 5), np.float32)
    w = np.zeros((4, 27), np.float32)
    out = np.zeros((2, 4, 5, 5), np.float32)
    _C.nn_conv_forward_packed(x, w, None, out, False, *geo)
    with pytest.raises(ValueError, match="expected"):
        _C.nn_conv_forward_packed(x, w[:, :26].copy(), None, out, False, *geo)
    with pytest.raises(ValueError, match="expected"):
        _C.nn_conv_forward_packed(x, w, np.zeros(3, np.float32), out, False, *geo)  # bias one short
    with pytest.raises(ValueError, match="expected"):
        _C.nn_conv_forward_packed(x, w, None, out[:1].copy(), True, *geo)
    with pytest.raises(TypeError, match="dtype"):
        _C.nn_conv_forward_packed(x, w.astype(np.float64), None, out, False, *geo)
    with pytest.raises(TypeError, match="float32 or float64"):
        _C.nn_conv_forward_packed(x.astype(np.int64), w, None, out, False, *geo)
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.nn_conv_weight_grad_packed(out, np.zeros((2, 3, 5, 10), np.float32)[..., ::2], w, *geo)
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _C.nn_conv_forward_packed(x, w, None, ro, False, *geo)
    with pytest.raises(ValueError, match="out of range"):
        _C.nn_conv_input_grad_packed(out, w.T.copy(), x.copy(), -2, 3, 4, *geo[3:])
    with pytest.raises(ValueError, match="out of range"):
        _C.nn_conv_input_grad_packed(out, w.T.copy(), x.copy(), 2, 3, 4,
                                     *_args((5, 5), (5, 5), (3, 3), (0, 1), (1, 1), (1, 1)))
    with pytest.raises(ValueError, match="too large"):
        _C.nn_conv_forward_packed(x, w, None, out, False, 2, 3, 1 << 40,
                                  *_args((5, 5), (1 << 30, 5), (3, 3), (1, 1), (1, 1), (1, 1)))


def test_convolution_chooses_the_packed_kernels(monkeypatch):
    """groups of 1: a product per sample with a full batch and full panels, the batch at once for a
    few positions; grouped and transposed convolutions keep im2col + BLAS."""
    calls = []
    real = _C.nn_conv_forward_packed
    monkeypatch.setattr(_C, "nn_conv_forward_packed", lambda *a: calls.append(a[4]) or real(*a))
    monkeypatch.setattr(_C, "get_num_threads", lambda: 2)
    for xs, ws, groups in [((4, 3, 14, 14), (5, 3, 3, 3), 1), ((4, 3, 2, 2), (5, 3, 3, 3), 1),
                           ((1, 3, 14, 14), (5, 3, 3, 3), 1), ((4, 4, 14, 14), (6, 2, 3, 3), 2)]:
        x = RNG.standard_normal(xs).astype(np.float32)
        w = RNG.standard_normal(ws).astype(np.float32)
        out = np.empty((xs[0], ws[0]) + xs[2:], np.float32)
        nn_conv.nn_convolution(x, w, None, 1, 1, 1, False, 0, groups, out)
    assert calls == [False, True, True]

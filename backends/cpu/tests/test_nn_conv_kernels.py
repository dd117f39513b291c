"""The convolution kernels' C++ entry points (``_C.nn_im2col``, ``_C.nn_col2im``), called on numpy arrays.

They serve flambeau-nn's ``nn_convolution`` ops; these tests need only the backend. im2col is
checked against windows cut out of a zero-padded copy, col2im as its adjoint, over random
geometries (paddings wider than the kernel reach, strides longer than the input); every size,
dtype and layout is checked again in C++, so a wrong call raises instead of reading out of bounds.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flambeau_cpu import _C
from flambeau_cpu.kernels import nn_conv

pytestmark = pytest.mark.skipif(not nn_conv.KERNELS, reason="extension built without the conv kernels")

RNG = np.random.default_rng(0)


def _ref_im2col(x, small, kernel, stride, pad, dil):
    """(N, C, *big) -> (N, C, K, L), zeros where a window reads the padding."""
    n, c = x.shape[:2]
    k = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p + s * st_ + d * kk) for p, s, st_, d, kk in
                                       zip(pad, small, stride, dil, kernel)])
    out = []
    for kidx in itertools.product(*(range(v) for v in kernel)):
        sl = tuple(slice(kidx[i] * dil[i], kidx[i] * dil[i] + stride[i] * (small[i] - 1) + 1, stride[i])
                   if small[i] else slice(0, 0) for i in range(k))
        out.append(xp[(slice(None), slice(None)) + sl].reshape(n, c, -1))
    return np.stack(out, axis=2)


def _three(t, fill):
    return [fill] * (3 - len(t)) + list(t)


def _args(big, small, kernel, stride, pad, dil):
    return (_three(big, 1), _three(small, 1), _three(kernel, 1), _three(stride, 1), _three(pad, 0), _three(dil, 1))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 3), n=st.integers(1, 2), c=st.integers(1, 3), batch_inner=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), data=st.data())
def test_im2col_matches_windows_and_col2im_is_its_adjoint(k, n, c, batch_inner, dtype, data):
    big = tuple(data.draw(st.integers(1, 6)) for _ in range(k))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    stride = tuple(data.draw(st.integers(1, 7)) for _ in range(k))
    dil = tuple(data.draw(st.integers(1, 3)) for _ in range(k))
    pad = tuple(data.draw(st.integers(0, 5)) for _ in range(k))
    small = tuple(max(1, (big[i] + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1) // stride[i] + 1) for i in range(k))
    x = RNG.standard_normal((n, c) + big).astype(dtype)
    kk, ll = int(np.prod(kernel)), int(np.prod(small))
    want = _ref_im2col(x.astype(np.float64), small, kernel, stride, pad, dil)  # (N, C, K, L)
    if batch_inner:
        cols = np.full((c, kk, n, ll), np.nan, dtype)
        _C.nn_im2col(x, cols, n, c, True, *_args(big, small, kernel, stride, pad, dil))
        got = cols.transpose(2, 0, 1, 3)
    else:
        cols = np.full((n, c, kk, ll), np.nan, dtype)
        _C.nn_im2col(x, cols, n, c, False, *_args(big, small, kernel, stride, pad, dil))
        got = cols
    np.testing.assert_allclose(got, want, rtol=1e-6)
    y = RNG.standard_normal(cols.shape).astype(dtype)
    back = np.full(x.shape, np.nan, dtype)
    _C.nn_col2im(y, back, n, c, batch_inner, *_args(big, small, kernel, stride, pad, dil))
    np.testing.assert_allclose((cols.astype(np.float64) * y).sum(), (x.astype(np.float64) * back).sum(),
                               rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4)


def test_native_conv_checks_sizes_dtypes_and_layouts():
    geo = _args((5, 5), (3, 3), (3, 3), (1, 1), (0, 0), (1, 1))
    x = np.zeros((2, 3, 5, 5), np.float32)
    cols = np.zeros((2, 3, 9, 9), np.float32)
    _C.nn_im2col(x, cols, 2, 3, False, *geo)
    with pytest.raises(ValueError, match="expected"):
        _C.nn_im2col(x, np.zeros((2, 3, 9, 8), np.float32), 2, 3, False, *geo)  # cols one column short
    with pytest.raises(ValueError, match="expected"):
        _C.nn_im2col(x, cols, 3, 3, False, *geo)  # more planes than the input has
    with pytest.raises(TypeError, match="dtype"):
        _C.nn_im2col(x, cols.astype(np.float64), 2, 3, False, *geo)
    with pytest.raises(TypeError, match="float32 or float64"):
        _C.nn_im2col(x.astype(np.int64), cols, 2, 3, False, *geo)
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.nn_im2col(np.zeros((2, 3, 5, 10), np.float32)[..., ::2], cols, 2, 3, False, *geo)
    with pytest.raises(ValueError, match="read-only"):
        ro = cols.copy()
        ro.flags.writeable = False
        _C.nn_im2col(x, ro, 2, 3, False, *geo)
    with pytest.raises(ValueError, match="out of range"):
        _C.nn_im2col(x, cols, 2, 3, False, *_args((5, 5), (3, 3), (3, 3), (0, 1), (0, 0), (1, 1)))  # stride 0
    with pytest.raises(ValueError, match="out of range"):
        _C.nn_col2im(cols, x, 2, 3, False, *_args((5, 5), (3, 3), (3, 3), (1, 1), (-1, 0), (1, 1)))
    with pytest.raises(ValueError, match="negative"):
        _C.nn_col2im(cols, x, -2, -3, False, *geo)
    with pytest.raises(ValueError, match="3 entries"):
        _C.nn_col2im(cols, x, 2, 3, False, [5, 5], *geo[1:])


def _ref_conv(x, w, b, stride, pad, dil, groups):
    """A convolution from reference windows: out[n, o, l] = sum over o's group of w * windows, plus b."""
    k = w.ndim - 2
    small = [(x.shape[2 + i] + 2 * pad[i] - dil[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1 for i in range(k)]
    cols = _ref_im2col(x, small, w.shape[2:], stride, pad, dil)  # (N, C, K, L)
    n, c = x.shape[:2]
    o = w.shape[0]
    cols = cols.reshape(n, groups, c // groups, -1, cols.shape[-1])
    wg = w.reshape(groups, o // groups, c // groups, -1)
    out = np.einsum("gock,ngckl->ngol", wg, cols).reshape((n, o) + tuple(small))
    return out if b is None else out + b.reshape((1, o) + (1,) * k)


# (input shape, weight shape, stride, padding, dilation, groups): enough output positions for the
# per-sample products straight into the output, too few for them, and the pointwise (1x1) case.
_CONV_CASES = [
    ((3, 4, 13, 12), (6, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1),     # 156 positions
    ((2, 6, 23, 20), (4, 3, 3, 2), (2, 1), (0, 2), (1, 2), 2),     # grouped, strided, dilated: 242 positions
    ((2, 4, 5, 5), (6, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1),       # 25 positions: one gemm over the batch
    ((2, 4, 9, 7), (6, 2, 1, 1), (1, 1), (0, 0), (1, 1), 2),       # pointwise, grouped, 63 positions
    ((2, 3, 300), (5, 3, 4), (1,), (2,), (1,), 1),                 # 1-d, 301 positions
]


@pytest.mark.parametrize("case", _CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_convolution_kernel_matches_windows(case, dtype, with_bias, threads, monkeypatch):
    monkeypatch.setattr(_C, "get_num_threads", lambda: threads)  # which path, not how many threads
    xs, ws, stride, pad, dil, groups = case
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[0]).astype(dtype) if with_bias else None
    want = _ref_conv(x, w, b, stride, pad, dil, groups)
    out = np.full(want.shape, np.nan, dtype)
    nn_conv.nn_convolution(x, w, b, stride, pad, dil, False, 0, groups, out)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    # an output the kernel cannot write in place (strided) goes through a working array
    strided = np.full(want.shape[:-1] + (2 * want.shape[-1],), np.nan, dtype)[..., ::2]
    nn_conv.nn_convolution(x, w, b, stride, pad, dil, False, 0, groups, strided)
    np.testing.assert_allclose(strided, want, rtol=tol, atol=tol)


def test_convolution_writes_wide_outputs_in_place(monkeypatch):
    """With one thread, grouped convolutions with many positions per sample (and 1x1 ones) skip the
    (O, N*L) intermediate (groups of 1 go to the packed kernels: test_nn_conv_packed.py)."""
    monkeypatch.setattr(_C, "get_num_threads", lambda: 1)
    calls = []
    real = nn_conv._convolve_into
    monkeypatch.setattr(nn_conv, "_convolve_into", lambda *a: calls.append(a[0].ll) or real(*a))
    for xs, ws, stride, pad, dil, groups in _CONV_CASES:
        x = RNG.standard_normal(xs).astype(np.float32)
        w = RNG.standard_normal(ws).astype(np.float32)
        out = np.empty(_ref_conv(x, w, None, stride, pad, dil, groups).shape, np.float32)
        nn_conv.nn_convolution(x, w, None, stride, pad, dil, False, 0, groups, out)
    assert calls == [242, 63]


@pytest.mark.parametrize("r, c", [(9, 32), (32, 9), (64, 288), (288, 64), (5, 5)])
def test_weight_product_runs_the_tall_orientation(r, c, monkeypatch):
    """rows @ cols^T is computed as the product whose result has at least as many rows as columns
    (OpenBLAS's threads split that one without waiting on each other), with the same values."""
    rows = RNG.standard_normal((2, r, 301))
    cols = RNG.standard_normal((2, c, 301))
    shapes = []
    real = np.matmul
    monkeypatch.setattr(nn_conv.np, "matmul", lambda a, b, **kw: shapes.append((a.shape[1], b.shape[2])) or
                        real(a, b, **kw))
    got = nn_conv._weight_product(rows, cols)
    monkeypatch.undo()
    np.testing.assert_allclose(got, rows @ cols.transpose(0, 2, 1), rtol=1e-12, atol=1e-12)
    assert shapes == [(max(r, c), min(r, c))]

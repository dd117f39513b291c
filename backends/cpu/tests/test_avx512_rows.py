"""The float32 AVX-512 row loops (csrc/vecmath_avx512.h) give the generic loops' results, bit for bit.

softmax, log_softmax, log_softmax's gradient, the fused cross-entropy (forward and backward) and the
LSTM cell's forward (the cell op and the whole-layer op) run
hand-written AVX-512 loops on CPUs that have AVX-512F (exp through vscalefps: 2.5x vec_exp's speed);
they reduce in the same lanes, blocks and order as the generic loops, so each case here runs both on
one machine (``_C.set_avx512_paths``) and compares the bits. On a CPU without AVX-512 both runs take
the generic loops and the module is skipped.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flambeau_cpu import _C


def _has_avx512() -> bool:
    before = _C.set_avx512_paths(True)
    on = _C.set_avx512_paths(before)  # whether True took: the CPU has AVX-512F
    return on


pytestmark = pytest.mark.skipif(not _has_avx512(), reason="no AVX-512F on this CPU (both paths are the generic one)")


@pytest.fixture(autouse=True)
def _restore_paths() -> Iterator[None]:
    yield
    _C.set_avx512_paths(True)


def _both(fn: Callable[[], tuple[np.ndarray, ...]]) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    _C.set_avx512_paths(False)
    generic = fn()
    _C.set_avx512_paths(True)
    return generic, fn()


def _assert_same_bits(generic: tuple[np.ndarray, ...], wide: tuple[np.ndarray, ...]) -> None:
    """Equal bits, except that a NaN's sign and payload may differ (IEEE leaves them unspecified)."""
    for g, w in zip(generic, wide):
        both_nan = np.isnan(g) & np.isnan(w)
        np.testing.assert_array_equal(np.where(both_nan, 0, g.view(np.uint32)),
                                      np.where(both_nan, 0, w.view(np.uint32)))


# Values that take each branch of exp: NaN, +-inf, overflow (> 88.72), subnormal results (< -87.3),
# zero (< -103.97), signed zeros (which of +0 and -0 is a row's largest depends on the order).
_SPECIAL = [np.nan, np.inf, -np.inf, 88.7, 88.73, 89.5, -87.5, -100.0, -103.99, -104.5, 0.0, -0.0, 1e38, -1e38]


@st.composite
def _rows(draw: st.DrawFn) -> np.ndarray:
    rows = draw(st.integers(1, 5))
    # across a vector (16), the block the sums restart at (4096) and the tails of both
    n = draw(st.sampled_from([1, 2, 15, 16, 17, 31, 33, 100, 1000, 4095, 4096, 4097, 8200]))
    scale = draw(st.sampled_from([1.0, 30.0, 200.0, 1e4]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, n)) * scale).astype(np.float32)
    for _ in range(draw(st.integers(0, 4))):
        x[rng.integers(rows), rng.integers(n)] = draw(st.sampled_from(_SPECIAL))
    return x


@settings(max_examples=150, deadline=None)
@given(x=_rows(), log=st.booleans())
def test_softmax_forward_bits(x: np.ndarray, log: bool) -> None:
    def run() -> tuple[np.ndarray, ...]:
        out = np.empty_like(x)
        assert _C.softmax_lastdim(x, out, log)
        return (out,)
    _assert_same_bits(*_both(run))


@settings(max_examples=100, deadline=None)
@given(x=_rows(), seed=st.integers(0, 2**32 - 1))
def test_log_softmax_backward_bits(x: np.ndarray, seed: int) -> None:
    y = np.empty_like(x)
    _C.softmax_lastdim(x, y, True)
    g = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)

    def run() -> tuple[np.ndarray, ...]:
        out = np.empty_like(x)
        assert _C.softmax_backward_lastdim(g, y, out, True)
        return (out,)
    _assert_same_bits(*_both(run))


@settings(max_examples=100, deadline=None)
@given(x=_rows(), weighted=st.booleans(), eps=st.sampled_from([0.0, 0.1, 1.0]), seed=st.integers(0, 2**32 - 1))
def test_cross_entropy_bits(x: np.ndarray, weighted: bool, eps: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, c = x.shape
    target = rng.integers(0, c, n)
    target[rng.integers(n)] = -100  # an ignored row
    weight = rng.random(c).astype(np.float32) if weighted else None
    scales = rng.standard_normal(n).astype(np.float32)

    def forward() -> tuple[np.ndarray, ...]:
        losses, weights = np.empty(n, np.float32), np.empty(n, np.float32)
        assert _C.cross_entropy_rows(x, target, weight, -100, eps, losses, weights) == -1
        return losses, weights

    def backward() -> tuple[np.ndarray, ...]:
        out = np.empty_like(x)
        assert _C.cross_entropy_backward_rows(scales, x, target, weight, -100, eps, out) == -1
        return (out,)
    _assert_same_bits(*_both(forward))
    _assert_same_bits(*_both(backward))


def test_exp_bits_over_float32_range() -> None:
    """log_softmax's gradient g - exp(y) * sum(g) with rows (y, 0) and g = (0, -1) is exp(y): a dense
    sweep of float32 y over [-110, 90] and the specials, both paths, bit for bit, and near numpy's."""
    y = np.concatenate([np.linspace(-110, 90, 200_003, dtype=np.float32), np.array(_SPECIAL, dtype=np.float32)])
    pair_y = np.stack([y, np.zeros_like(y)], axis=1)
    pair_g = np.stack([np.zeros_like(y), -np.ones_like(y)], axis=1)

    def run() -> tuple[np.ndarray, ...]:
        out = np.empty_like(pair_y)
        assert _C.softmax_backward_lastdim(pair_g, pair_y, out, True)
        return (out,)
    generic, wide = _both(run)
    _assert_same_bits(generic, wide)
    normal = np.isfinite(y) & (y > -87.0) & (y < 88.0)  # results neither subnormal nor overflowing
    np.testing.assert_allclose(wide[0][normal, 0], np.exp(y[normal].astype(np.float64)), rtol=3e-7, atol=0)
    assert np.isnan(wide[0][np.isnan(y), 0]).all()
    assert (wide[0][y == np.inf, 0] == np.inf).all() and (wide[0][y == -np.inf, 0] == 0).all()


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 6), hidden=st.sampled_from([1, 5, 16, 17, 33, 128, 131]),
       scale=st.sampled_from([0.3, 3.0, 30.0]), specials=st.integers(0, 4), seed=st.integers(0, 2**32 - 1))
def test_lstm_cell_bits(rows: int, hidden: int, scale: float, specials: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gates = (rng.standard_normal((rows, 4 * hidden)) * scale).astype(np.float32)
    cx = (rng.standard_normal((rows, hidden)) * scale).astype(np.float32)
    for _ in range(specials):
        target = gates if rng.integers(2) else cx
        target[rng.integers(rows), rng.integers(target.shape[1])] = rng.choice(_SPECIAL)

    def run() -> tuple[np.ndarray, ...]:
        hy, cy = np.empty((rows, hidden), np.float32), np.empty((rows, hidden), np.float32)
        work = np.empty((rows, 4 * hidden), np.float32)
        _C.nn_lstm_cell(gates, cx, hy, cy, work, rows, hidden)
        return hy, cy, work
    _assert_same_bits(*_both(run))


def test_lstm_layer_bits() -> None:
    """The whole-layer LSTM (its steps' cells run on the units each thread owns) through flambeau.nn."""
    import flambeau as fb

    pytest.importorskip("flambeau.nn")  # not in the backend's own environment (tox backend-cpu)
    rng = np.random.default_rng(0)
    layer = fb.nn.LSTM(24, 37, num_layers=2)
    x = fb.from_numpy((rng.standard_normal((9, 5, 24)) * 2).astype(np.float32))

    def run() -> tuple[np.ndarray, ...]:
        with fb.no_grad():
            out, (h, c) = layer(x)
        return out.numpy(), h.numpy(), c.numpy()
    _assert_same_bits(*_both(run))

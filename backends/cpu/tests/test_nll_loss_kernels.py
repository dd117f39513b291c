"""The C++ NLL loops (``_C.nll_loss_rows``, ``_C.nll_loss_backward_rows``) against numpy: weights,
ignore_index, reductions, strided inputs, out-of-range targets, and the layouts they decline."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau  # noqa: F401  (loads the backend the way users do, before its kernels)
from flambeau_cpu import _C
from flambeau_cpu.kernels import nn_loss


def _case(rng, n, c, dtype, weighted, ignore=-100):
    x = rng.standard_normal((n, c)).astype(dtype)
    t = rng.integers(0, c, n).astype(np.int64)
    t[rng.random(n) < 0.2] = ignore
    w = (rng.random(c) + 0.5).astype(dtype) if weighted else None
    return x, t, w


def _ref_forward(x, t, w, ignore):
    kept = t != ignore
    wt = np.where(kept, 1.0 if w is None else np.asarray(w, np.float64)[np.where(kept, t, 0)], 0.0)
    with np.errstate(invalid="ignore"):  # an ignored row over -inf: 0 * inf, discarded by the where
        losses = np.where(kept, -x[np.arange(len(t)), np.where(kept, t, 0)].astype(np.float64) * wt, 0.0)
    return losses, wt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n, c", [(1, 1), (7, 5), (70_000, 3)])
def test_forward_rows_match_numpy(dtype, weighted, n, c):
    rng = np.random.default_rng(n + c)
    x, t, w = _case(rng, n, c, dtype, weighted, ignore=1 if c > 1 else -100)
    losses, weights = np.empty(n, dtype), np.empty(n, dtype)
    assert _C.nll_loss_rows(x, t, w, 1 if c > 1 else -100, losses, weights) == -1
    ref_l, ref_w = _ref_forward(x, t, w, 1 if c > 1 else -100)
    np.testing.assert_allclose(losses, ref_l, rtol=1e-6)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-6)


def test_forward_reads_a_strided_input_in_place_and_ignored_rows_are_zero_even_over_inf():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 4, 5))
    x = base[:, 1, ::2]  # (6, 3), strides (160, 16)
    x[0, :] = -np.inf
    t = np.array([-100, 0, 2, 1, -100, 2], np.int64)
    losses, weights = np.empty(6), np.empty(6)
    assert _C.nll_loss_rows(x, t, None, -100, losses, weights) == -1
    ref_l, ref_w = _ref_forward(np.ascontiguousarray(x), t, None, -100)
    np.testing.assert_array_equal(losses, ref_l)
    assert losses[0] == 0 and weights.tolist() == [0, 1, 1, 1, 0, 1]
    xt = np.ascontiguousarray(rng.standard_normal((3, 6))).T  # a transposed (6, 3) view
    assert _C.nll_loss_rows(xt, t, None, -100, losses, weights) == -1
    np.testing.assert_array_equal(losses, _ref_forward(np.ascontiguousarray(xt), t, None, -100)[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("n, c", [(1, 1), (9, 4), (40_000, 3)])
def test_backward_rows_match_numpy(dtype, weighted, reduction, n, c):
    rng = np.random.default_rng(n * c)
    x, t, w = _case(rng, n, c, dtype, weighted)
    g = rng.standard_normal(n).astype(dtype) if reduction == "none" else np.array(1.5, dtype)
    out = np.full((n, c), 7.0, dtype)
    assert _C.nll_loss_backward_rows(g, reduction, t, w, -100, out) == -1
    _, wt = _ref_forward(x, t, w, -100)
    scale = g.astype(np.float64) if reduction == "none" else np.full(n, float(g))
    if reduction == "mean":
        scale = scale / wt.sum()
    ref = np.zeros((n, c))
    kept = t != -100
    ref[np.arange(n)[kept], t[kept]] = -(wt * scale)[kept]
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_out_of_range_targets_report_the_first_bad_row():
    x = np.zeros((5, 3))
    t = np.array([0, 3, 1, -1, 2], np.int64)
    losses, weights = np.empty(5), np.empty(5)
    assert _C.nll_loss_rows(x, t, None, -100, losses, weights) == 1
    out = np.empty((5, 3))
    assert _C.nll_loss_backward_rows(np.ones(5), "none", t, None, -100, out) == 1
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        nn_loss.nn_nll_loss(x, t, None, "sum", -100, np.empty(()))


def test_layouts_they_do_not_take_are_declined_untouched():
    x, t = np.zeros((4, 3), np.float32), np.zeros(4, np.int64)
    losses, weights = np.full(4, 9, np.float32), np.full(4, 9, np.float32)
    for args in [(x.astype(np.float16), t, None), (x, t.astype(np.int32), None), (x, t[:3], None),
                 (x, t, np.ones(2, np.float32)), (x, t, np.ones(3, np.float64)), (x.reshape(12), t, None)]:
        assert _C.nll_loss_rows(*args, -100, losses, weights) == -2
    assert _C.nll_loss_rows(x, t, None, -100, losses, weights[:3]) == -2
    assert (losses == 9).all() and (weights == 9).all()
    out = np.full((4, 3), 9, np.float32)
    for g, red, o in [(np.ones(4, np.float32), "mean", out), (np.ones(3, np.float32), "none", out),
                      (np.ones(4, np.float64), "none", out), (np.ones(4, np.float32), "none", out.T)]:
        assert _C.nll_loss_backward_rows(g, red, t, None, -100, o) == -2
    assert (out == 9).all()
    with pytest.raises(ValueError, match="reduction"):
        _C.nll_loss_backward_rows(np.ones(1, np.float32), "avg", t, None, -100, out)


def test_the_kernels_take_the_native_loops(monkeypatch):
    def refuse(*args):
        raise AssertionError("numpy path")

    monkeypatch.setattr(nn_loss, "_picked", refuse)
    rng = np.random.default_rng(5)
    x, t, w = _case(rng, 50, 6, np.float32, True)
    out = np.empty((), np.float32)
    nn_loss.nn_nll_loss(x, t, w, "mean", -100, out)
    ref_l, ref_w = _ref_forward(x, t, w, -100)
    assert out == pytest.approx(ref_l.sum() / ref_w.sum(), rel=1e-5)
    grad = np.empty_like(x)
    nn_loss.nn_nll_loss_backward(np.array(1.0, np.float32), x, t, w, "sum", -100, grad)
    assert grad.sum() == pytest.approx(-ref_w.sum(), rel=1e-5)

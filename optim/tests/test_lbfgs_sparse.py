"""LBFGS (against a numpy two-loop recursion, and convergence with the strong-Wolfe search) and SparseAdam."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim

from optim_problems import A, B, as_param, quadratic_grad, rosenbrock_grad


def quadratic(x):
    return 0.5 * x @ A @ x - B @ x


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def make_closure(p, f, grad_fn, counter=None):
    def closure():
        if counter is not None:
            counter.append(1)
        x = p.numpy().astype(np.float64)
        p.grad = fb.tensor(grad_fn(x).tolist(), dtype=p.dtype)
        return f(x)

    return closure


def lbfgs_reference(x, grad_fn, steps, lr, history_size):
    """One L-BFGS iteration per step, fixed step length, Nocedal and Wright's two-loop recursion."""
    s_hist, y_hist = [], []
    prev_g = d = None
    t = None
    out = []
    k = 0
    for _ in range(steps):
        g = grad_fn(x)
        if np.abs(g).max() <= 1e-7:  # tolerance_grad: already optimal, no move
            out.append(x.copy())
            continue
        if k == 0:
            d = -g
            h = 1.0
        else:
            y, s = g - prev_g, d * t
            if y @ s > 1e-10:
                if len(s_hist) == history_size:
                    s_hist.pop(0)
                    y_hist.pop(0)
                s_hist.append(s)
                y_hist.append(y)
                h = (y @ s) / (y @ y)
            q = -g
            alphas = []
            for s_i, y_i in reversed(list(zip(s_hist, y_hist))):
                a = (s_i @ q) / (y_i @ s_i)
                alphas.append(a)
                q = q - a * y_i
            r = q * h
            for (s_i, y_i), a in zip(zip(s_hist, y_hist), reversed(alphas)):
                b = (y_i @ r) / (y_i @ s_i)
                r = r + s_i * (a - b)
            d = r
        prev_g = g
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if k == 0 else lr
        k += 1
        if g @ d > -1e-9:  # tolerance_change: not a descent direction
            out.append(x.copy())
            continue
        x = x + t * d
        out.append(x.copy())
    return np.array(out)


@pytest.mark.parametrize("history_size", [3, 100])
def test_lbfgs_matches_two_loop_reference(history_size):
    x0 = np.array([1.0, -2.0, 0.5, 3.0])
    p = as_param(x0)
    opt = optim.LBFGS([p], lr=0.5, max_iter=1, history_size=history_size)
    got = []
    for _ in range(25):
        opt.step(make_closure(p, quadratic, quadratic_grad))
        got.append(p.numpy().copy())
    want = lbfgs_reference(x0, quadratic_grad, 25, 0.5, history_size)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-10, atol=1e-12)


def test_lbfgs_strong_wolfe_solves_quadratic():
    p = as_param(np.array([1.0, -2.0, 0.5, 3.0]))
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe", max_iter=50, tolerance_grad=1e-12,
                      tolerance_change=1e-14)
    loss = opt.step(make_closure(p, quadratic, quadratic_grad))
    assert loss == pytest.approx(quadratic(np.array([1.0, -2.0, 0.5, 3.0])))
    np.testing.assert_allclose(p.numpy(), np.linalg.solve(A, B), rtol=1e-6, atol=1e-7)


def test_lbfgs_strong_wolfe_rosenbrock():
    p = as_param(np.array([-1.2, 1.0]))
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe", max_iter=100, history_size=10)
    evals = []
    for _ in range(3):
        opt.step(make_closure(p, rosenbrock, rosenbrock_grad, evals))
    np.testing.assert_allclose(p.numpy(), [1.0, 1.0], atol=1e-5)
    assert opt.state[p]["func_evals"] == len(evals)


def test_lbfgs_respects_max_eval():
    p = as_param(np.array([-1.2, 1.0]))
    opt = optim.LBFGS([p], max_iter=100, max_eval=7)
    evals = []
    opt.step(make_closure(p, rosenbrock, rosenbrock_grad, evals))
    assert len(evals) <= 7 + 1
    assert opt.state[p]["n_iter"] >= 1


def test_lbfgs_stops_at_zero_gradient_and_rejects_groups():
    p = as_param(np.linalg.solve(A, B))
    opt = optim.LBFGS([p])
    opt.step(make_closure(p, quadratic, quadratic_grad))
    np.testing.assert_allclose(p.numpy(), np.linalg.solve(A, B))
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [fb.tensor([1.0])]}, {"params": [fb.tensor([1.0])]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optim.LBFGS([fb.tensor([1.0])], line_search_fn="armijo")


class _Coo:
    """A minimal COO gradient (flambeau has no sparse layout): rows ``indices`` of a dense shape."""

    is_sparse = True

    def __init__(self, indices, values):
        self.indices, self.values = indices, values

    def coalesce(self):
        rows = sorted(set(self.indices))
        summed = [np.sum([v for i, v in zip(self.indices, self.values) if i == r], axis=0).tolist() for r in rows]
        return _Coo(rows, summed)

    def _indices(self):
        return fb.tensor([self.indices], dtype=fb.int64)

    def _values(self):
        return fb.tensor(self.values, dtype=fb.float64)


def test_sparse_adam_raises_for_dense_gradients():
    p = fb.tensor([[1.0, 2.0], [3.0, 4.0]])
    opt = optim.SparseAdam([p])
    p.grad = fb.ones(2, 2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
        opt.step()
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SparseAdam([p], lr=0.0)


def test_sparse_adam_update_touches_only_given_rows():
    # Tensor.grad only holds dense Tensors today, so the sparse update is exercised directly.
    from flambeau.optim.sparse_adam import _sparse_adam_update

    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    p = as_param(x)
    exp_avg, exp_avg_sq = fb.zeros_like(p), fb.zeros_like(p)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t, (idx, vals) in enumerate([([0, 2, 0], [[1.0, 1.0], [2.0, -1.0], [0.5, 0.5]]), ([2], [[1.0, 3.0]])], 1):
        _sparse_adam_update(p, _Coo(idx, vals), exp_avg, exp_avg_sq, float(t), 0.1, 0.9, 0.999, 1e-8, False)
        g = np.zeros_like(x)
        touched = sorted(set(idx))
        for i, row in zip(idx, vals):
            g[i] += row
        for r in touched:
            m[r] = 0.9 * m[r] + 0.1 * g[r]
            v[r] = 0.999 * v[r] + 0.001 * g[r] ** 2
            x[r] = x[r] - 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m[r] / (np.sqrt(v[r]) + 1e-8)
        np.testing.assert_allclose(p.numpy(), x, rtol=1e-10)
    assert p.numpy()[1].tolist() == [3.0, 4.0]


def test_lbfgs_state_dict_round_trip_bit_for_bit():
    x0 = np.array([-1.2, 1.0])
    p = as_param(x0)
    opt = optim.LBFGS([p], max_iter=3, history_size=5, line_search_fn="strong_wolfe")
    for _ in range(2):
        opt.step(make_closure(p, rosenbrock, rosenbrock_grad))
    saved = copy.deepcopy(opt.state_dict())
    saved_p = p.clone()
    for _ in range(2):
        opt.step(make_closure(p, rosenbrock, rosenbrock_grad))
    q = saved_p.clone()
    opt2 = optim.LBFGS([q], max_iter=3, history_size=5, line_search_fn="strong_wolfe")
    opt2.load_state_dict(saved)
    for _ in range(2):
        opt2.step(make_closure(q, rosenbrock, rosenbrock_grad))
    assert np.array_equal(q.numpy(), p.numpy())

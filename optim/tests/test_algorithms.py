"""Each algorithm's trajectory over 25 steps against its update rule written out in numpy."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim

import optim_reference as ref
from optim_problems import PROBLEMS, as_param

STEPS = 25

# (flambeau class, reference class, keyword arguments for both)
CASES = [
    (optim.SGD, ref.SGD, dict(lr=1e-3)),
    (optim.SGD, ref.SGD, dict(lr=1e-3, momentum=0.9)),
    (optim.SGD, ref.SGD, dict(lr=1e-3, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    (optim.SGD, ref.SGD, dict(lr=1e-3, momentum=0.8, nesterov=True, weight_decay=0.05)),
    (optim.SGD, ref.SGD, dict(lr=1e-3, momentum=0.5, maximize=True)),
    (optim.Adam, ref.Adam, dict(lr=1e-2)),
    (optim.Adam, ref.Adam, dict(lr=1e-2, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    (optim.Adam, ref.Adam, dict(lr=1e-2, maximize=True, eps=1e-6)),
    (optim.AdamW, ref.Adam, dict(lr=1e-2, weight_decay=0.1, _ref=dict(decoupled=True))),
    (optim.AdamW, ref.Adam, dict(lr=1e-2, amsgrad=True, _ref=dict(decoupled=True, weight_decay=1e-2))),
    (optim.Adam, ref.Adam, dict(lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True, _ref=dict(decoupled=True))),
    (optim.Adamax, ref.Adamax, dict(lr=1e-2)),
    (optim.Adamax, ref.Adamax, dict(lr=1e-2, weight_decay=0.1, maximize=True)),
    (optim.NAdam, ref.NAdam, dict(lr=1e-2)),
    (optim.NAdam, ref.NAdam, dict(lr=1e-2, weight_decay=0.1, momentum_decay=1e-2)),
    (optim.NAdam, ref.NAdam, dict(lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (optim.RAdam, ref.RAdam, dict(lr=1e-2)),
    (optim.RAdam, ref.RAdam, dict(lr=1e-3, betas=(0.9, 0.8), weight_decay=0.1)),
    (optim.RAdam, ref.RAdam, dict(lr=1e-3, betas=(0.9, 0.8), weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.Adadelta, ref.Adadelta, dict(lr=1.0)),
    (optim.Adadelta, ref.Adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    (optim.Adagrad, ref.Adagrad, dict(lr=1e-1)),
    (optim.Adagrad, ref.Adagrad, dict(lr=1e-1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5)),
    (optim.Adagrad, ref.Adagrad, dict(lr=1e-1, maximize=True)),
    (optim.RMSprop, ref.RMSprop, dict(lr=1e-3)),
    (optim.RMSprop, ref.RMSprop, dict(lr=1e-3, centered=True, weight_decay=0.1)),
    (optim.RMSprop, ref.RMSprop, dict(lr=1e-3, momentum=0.9)),
    (optim.RMSprop, ref.RMSprop, dict(lr=1e-3, momentum=0.5, centered=True, alpha=0.9, maximize=True)),
    (optim.Rprop, ref.Rprop, dict(lr=1e-2)),
    (optim.Rprop, ref.Rprop, dict(lr=1e-2, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    (optim.ASGD, ref.ASGD, dict(lr=1e-3)),
    (optim.ASGD, ref.ASGD, dict(lr=1e-3, t0=5, lambd=1e-2, weight_decay=0.1)),
    (optim.Adafactor, ref.Adafactor, dict(lr=1e-2)),
    (optim.Adafactor, ref.Adafactor, dict(lr=5e-2, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=0.9 + 0.2,
                                          weight_decay=0.1, maximize=True)),
]


def _ids(case):
    cls, _, kwargs = case
    return cls.__name__ + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items() if k != "_ref")


def run_flambeau(cls, kwargs, grad_fn, x0, steps=STEPS, dtype=fb.float64, foreach=None):
    p = as_param(x0, dtype)
    extra = {} if foreach is None else {"foreach": foreach}
    opt = cls([p], **kwargs, **extra)
    out = []
    for _ in range(steps):
        p.grad = fb.tensor(grad_fn(p.numpy().astype(np.float64)).tolist(), dtype=dtype)
        opt.step()
        out.append(p.numpy().astype(np.float64).copy())
    return np.array(out)


def run_reference(ref_cls, kwargs, grad_fn, x0, steps=STEPS):
    opt = ref_cls(**kwargs)
    x = x0.astype(np.float64)
    out = []
    for _ in range(steps):
        x = opt.step(x, grad_fn(x))
        out.append(x.copy())
    return np.array(out)


# NAdam and ASGD keep scalars (mu_product; eta, mu) in float32 tensors, as PyTorch does.
_FLOAT32_SCALARS = (optim.NAdam, optim.ASGD)


def split_kwargs(case):
    """(class, reference class, flambeau kwargs, reference kwargs) of a case."""
    cls, ref_cls, kwargs = case
    kwargs = dict(kwargs)
    ref_kwargs = {k: v for k, v in kwargs.items() if not (ref_cls is ref.Adam and k == "decoupled_weight_decay")}
    if cls is optim.AdamW:
        ref_kwargs.setdefault("weight_decay", 1e-2)
    ref_kwargs.update(ref_kwargs.pop("_ref", {}))
    kwargs.pop("_ref", None)
    return cls, ref_cls, kwargs, ref_kwargs


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_trajectory_matches_update_rule(case, problem, foreach):
    cls, ref_cls, kwargs, ref_kwargs = split_kwargs(case)
    grad_fn, x0 = problem
    if kwargs.get("maximize"):  # maximize -f: the same descent on f, through the negated gradient
        grad_fn = (lambda f: lambda x: -f(x))(grad_fn)
    got = run_flambeau(cls, kwargs, grad_fn, x0, foreach=foreach)
    want = run_reference(ref_cls, ref_kwargs, grad_fn, x0)
    rtol = 1e-5 if cls in _FLOAT32_SCALARS else 1e-10
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2)
    assert not np.allclose(got[-1], x0)  # the optimizer moved


@pytest.mark.parametrize("case", CASES[::3], ids=_ids)
def test_float32_trajectory(case):
    cls, ref_cls, kwargs, ref_kwargs = split_kwargs(case)
    grad_fn, x0 = PROBLEMS["quadratic"]
    got = run_flambeau(cls, kwargs, grad_fn, x0, dtype=fb.float32)
    want = run_reference(ref_cls, ref_kwargs, grad_fn, x0)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def test_several_params_and_groups_match_separate_runs():
    grad_fn, x0 = PROBLEMS["quadratic"]
    a, b = as_param(x0), as_param(x0 * 2)
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 1e-1}], lr=1e-2)
    ra, rb = ref.Adam(lr=1e-2), ref.Adam(lr=1e-1)
    xa, xb = x0.copy(), x0 * 2
    for _ in range(STEPS):
        a.grad = fb.tensor(grad_fn(a.numpy()).tolist(), dtype=fb.float64)
        b.grad = fb.tensor(grad_fn(b.numpy()).tolist(), dtype=fb.float64)
        opt.step()
        xa, xb = ra.step(xa, grad_fn(xa)), rb.step(xb, grad_fn(xb))
    np.testing.assert_allclose(a.numpy(), xa, rtol=1e-10)
    np.testing.assert_allclose(b.numpy(), xb, rtol=1e-10)


def test_param_without_grad_is_skipped():
    a, b = fb.tensor([1.0, 2.0]), fb.tensor([3.0, 4.0])
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad = fb.tensor([1.0, 1.0])
    opt.step()
    assert b.tolist() == [3.0, 4.0]
    assert b not in opt.state or "momentum_buffer" not in opt.state[b]
    np.testing.assert_allclose(a.numpy(), [0.9, 1.9], rtol=1e-6)


def test_sgd_momentum_buffer_added_late_starts_from_its_grad():
    # A parameter first getting a gradient at step 2 starts its buffer from that gradient (dampening ignored).
    a, b = fb.tensor([1.0], dtype=fb.float64), fb.tensor([1.0], dtype=fb.float64)
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9, dampening=0.5)
    a.grad = fb.tensor([1.0], dtype=fb.float64)
    opt.step()
    b.grad = fb.tensor([1.0], dtype=fb.float64)
    opt.step()
    np.testing.assert_allclose(b.numpy(), [0.9])
    np.testing.assert_allclose(a.numpy(), [1.0 - 0.1 - 0.1 * (0.9 + 0.5)])


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW, optim.Adamax, optim.NAdam, optim.RAdam,
                                 optim.Adadelta, optim.Adagrad, optim.RMSprop, optim.Rprop, optim.ASGD,
                                 optim.Adafactor])
def test_nan_gradient_propagates(cls):
    p = fb.tensor([1.0, 2.0, 3.0])
    opt = cls([p], lr=0.1) if cls is not optim.Adadelta else cls([p])
    p.grad = fb.tensor([float("nan"), 1.0, 1.0])
    opt.step()  # does not raise
    if cls is optim.Rprop:  # its step is sign(grad) * step_size, and sign(NaN) is 0: p stays, as in PyTorch
        assert p.numpy()[0] == 1.0
    else:
        assert np.isnan(p.numpy()[0])
    if cls is not optim.Adafactor:  # Adafactor's update is scaled by the (NaN) RMS of the whole update
        assert np.isfinite(p.numpy()[1:]).all()


def test_closure_loss_is_returned():
    p = fb.tensor([1.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        calls.append(1)
        p.grad = fb.tensor([2.0])
        return 42.0

    assert opt.step(closure) == 42.0
    assert calls == [1]
    np.testing.assert_allclose(p.numpy(), [0.8])

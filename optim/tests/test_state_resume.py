"""Resuming from state dicts: N steps, save, rebuild, load, M more steps == N + M steps, bit for bit.

Every optimizer, with each of its options that changes what the state holds or how it is
updated (amsgrad, nesterov, maximize, momentum, weight decay, centered, foreach/fused...), over
two parameter groups with their own options, for float32 and float64 parameters; and every
learning-rate scheduler driving an optimizer. The state dicts go through ``copy.deepcopy`` (what
a checkpoint does to them) so that the resumed run shares no tensor with the first.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim
from flambeau.optim import lr_scheduler as sched
from flambeau.optim.swa_utils import SWALR

N, M = 4, 5

# (name, class, options); every entry is run for float32 and float64 parameters.
CONFIGS = [
    ("sgd", optim.SGD, dict(lr=0.05)),
    ("sgd_momentum_wd", optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd_nesterov_max", optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("sgd_foreach", optim.SGD, dict(lr=0.05, momentum=0.9, foreach=True)),
    ("sgd_fused", optim.SGD, dict(lr=0.05, momentum=0.9, fused=True)),
    ("adam", optim.Adam, dict(lr=0.01)),
    ("adam_amsgrad_wd_max", optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("adam_foreach", optim.Adam, dict(lr=0.01, amsgrad=True, foreach=True)),
    ("adam_fused", optim.Adam, dict(lr=0.01, amsgrad=True, fused=True)),
    ("adam_decoupled", optim.Adam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("adamw", optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    ("adamw_amsgrad_fused", optim.AdamW, dict(lr=0.01, amsgrad=True, fused=True)),
    ("adamax", optim.Adamax, dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("adamax_foreach", optim.Adamax, dict(lr=0.01, foreach=True)),
    ("nadam", optim.NAdam, dict(lr=0.01, weight_decay=0.1, momentum_decay=4e-3)),
    ("nadam_decoupled_foreach", optim.NAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                                  foreach=True)),
    ("radam", optim.RAdam, dict(lr=0.01, weight_decay=0.1)),
    ("radam_decoupled_foreach", optim.RAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                                  foreach=True)),
    ("adadelta", optim.Adadelta, dict(lr=0.5, weight_decay=0.1, maximize=True)),
    ("adadelta_foreach", optim.Adadelta, dict(foreach=True)),
    ("adagrad", optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("adagrad_foreach", optim.Adagrad, dict(lr=0.1, lr_decay=0.01, foreach=True)),
    ("adagrad_fused", optim.Adagrad, dict(lr=0.1, fused=True)),
    ("adafactor", optim.Adafactor, dict(lr=0.01, weight_decay=0.1)),
    ("adafactor_maximize_foreach", optim.Adafactor, dict(maximize=True, foreach=True)),
    ("asgd", optim.ASGD, dict(lr=0.05)),
    ("asgd_averaging", optim.ASGD, dict(lr=0.05, t0=2, lambd=0.01, weight_decay=0.1)),
    ("asgd_foreach_max", optim.ASGD, dict(lr=0.05, t0=2, foreach=True, maximize=True)),
    ("rmsprop", optim.RMSprop, dict(lr=0.01)),
    ("rmsprop_centered_momentum", optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("rmsprop_foreach_max", optim.RMSprop, dict(lr=0.01, momentum=0.5, foreach=True, maximize=True)),
    ("rprop", optim.Rprop, dict(lr=0.01)),
    ("rprop_foreach_max", optim.Rprop, dict(lr=0.01, foreach=True, maximize=True)),
    ("lbfgs", optim.LBFGS, dict(lr=0.5, max_iter=3, history_size=3)),
    ("lbfgs_wolfe", optim.LBFGS, dict(lr=1, max_iter=4, history_size=2, line_search_fn="strong_wolfe")),
]

_rng = np.random.default_rng(7)
_W0 = _rng.normal(size=(3, 4))
_B0 = _rng.normal(size=4)
_V0 = _rng.normal(size=5)
_TARGETS = [_rng.normal(size=s) for s in ((3, 4), (4,), (5,))]


def _params(dtype):
    return [fb.tensor(x.tolist(), dtype=dtype) for x in (_W0, _B0, _V0)]


def _groups(params, name):
    # Two groups with their own options: the second overrides the learning rate.
    second = {"params": params[2:]}
    if "lbfgs" not in name:  # LBFGS takes one group only
        return [{"params": params[:2]}, second | {"lr": 0.02}]
    return params


def _set_grads(params, k):
    """A step-dependent gradient of a smooth loss, computed in numpy: 0.5 ||p - t||^2 + 0.1 sin(k) p^3."""
    loss = 0.0
    for p, t in zip(params, _TARGETS):
        x = p.detach().numpy().astype(np.float64)
        loss += float(0.5 * ((x - t) ** 2).sum() + 0.1 * math.sin(k) * (x ** 3).sum() / 3)
        g = (x - t) + 0.1 * math.sin(k) * x ** 2
        p.grad = fb.tensor(g.tolist(), dtype=p.dtype)
    return loss


def _step(opt, params, k):
    if isinstance(opt, optim.LBFGS):
        opt.step(lambda: _set_grads(params, k))
    else:
        _set_grads(params, k)
        opt.step()


def _run(cls, kwargs, name, dtype, steps, start=None):
    params = _params(dtype) if start is None else [fb.tensor(p.tolist(), dtype=dtype) for p in start[0]]
    opt = cls(_groups(params, name), **kwargs)
    if start is not None:
        opt.load_state_dict(start[1])
    first = 0 if start is None else N
    for k in range(first, first + steps):
        _step(opt, params, k)
    return params, opt


def _skip_if_unsupported(cls, kwargs, dtype):
    if kwargs.get("fused"):
        try:
            p = fb.zeros(2, dtype=dtype)
            p.grad = fb.zeros(2, dtype=dtype)
            cls([p], **kwargs).step()
        except RuntimeError as e:  # a backend without the fused kernel, or a dtype it does not take
            pytest.skip(str(e))


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name, cls, kwargs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_resume_is_bitwise_identical(name, cls, kwargs, dtype):
    _skip_if_unsupported(cls, kwargs, dtype)
    straight, _ = _run(cls, kwargs, name, dtype, N + M)
    first, opt = _run(cls, kwargs, name, dtype, N)
    saved = ([p.detach().numpy().copy() for p in first], copy.deepcopy(opt.state_dict()))
    resumed, opt2 = _run(cls, kwargs, name, dtype, M, start=saved)
    for got, want in zip(resumed, straight):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())  # exactly, not approximately


@pytest.mark.parametrize("name, cls, kwargs", [c for c in CONFIGS if c[0] in ("asgd_averaging", "nadam")],
                         ids=["asgd_averaging", "nadam"])
def test_resume_keeps_scalar_state_dtypes(name, cls, kwargs):
    # Scalar state (steps, ASGD's eta and mu, NAdam's mu_product) keeps its own dtype through a
    # load into float64 parameters: cast like the parameter, its next update would round
    # differently from the uninterrupted run's.
    _, opt = _run(cls, kwargs, name, fb.float64, N)
    sd = copy.deepcopy(opt.state_dict())
    params = _params(fb.float64)
    opt2 = cls(_groups(params, name), **kwargs)
    opt2.load_state_dict(sd)
    for before, after in zip(opt.state.values(), opt2.state.values()):
        for key, value in before.items():
            if isinstance(value, fb.Tensor):
                assert after[key].dtype == value.dtype, key


# -- learning-rate schedulers ----------------------------------------------------------------

SCHEDULERS = [
    ("lambda", lambda o: sched.LambdaLR(o, lambda e: 0.9 ** e)),
    ("multiplicative", lambda o: sched.MultiplicativeLR(o, lambda e: 0.95)),
    ("step", lambda o: sched.StepLR(o, step_size=2, gamma=0.5)),
    ("multistep", lambda o: sched.MultiStepLR(o, milestones=[2, 5, 6], gamma=0.5)),
    ("constant", lambda o: sched.ConstantLR(o, factor=0.5, total_iters=5)),
    ("linear", lambda o: sched.LinearLR(o, start_factor=0.2, total_iters=6)),
    ("exponential", lambda o: sched.ExponentialLR(o, gamma=0.9)),
    ("polynomial", lambda o: sched.PolynomialLR(o, total_iters=7, power=2.0)),
    ("cosine", lambda o: sched.CosineAnnealingLR(o, T_max=3, eta_min=0.001)),
    ("cosine_restarts", lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001)),
    ("cyclic", lambda o: sched.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                                        gamma=0.9)),
    ("onecycle", lambda o: sched.OneCycleLR(o, max_lr=0.1, total_steps=20, three_phase=True)),
    ("sequential", lambda o: sched.SequentialLR(o, [sched.ConstantLR(o, factor=0.5, total_iters=2),
                                                    sched.ExponentialLR(o, gamma=0.9)], milestones=[3])),
    ("chained", lambda o: sched.ChainedScheduler([sched.ConstantLR(o, factor=0.5, total_iters=3),
                                                  sched.ExponentialLR(o, gamma=0.9)])),
    ("plateau", lambda o: sched.ReduceLROnPlateau(o, factor=0.5, patience=1, cooldown=1)),
    ("swalr", lambda o: SWALR(o, swa_lr=0.01, anneal_epochs=3, anneal_strategy="cos")),
    ("swalr_linear", lambda o: SWALR(o, swa_lr=[0.01, 0.03], anneal_epochs=4, anneal_strategy="linear")),
]


def _sched_run(make, steps, start=None):
    params = _params(fb.float32) if start is None else [fb.tensor(p.tolist()) for p in start[0]]
    opt = optim.SGD(_groups(params, "sgd"), lr=0.05, momentum=0.9)
    s = make(opt)
    if start is not None:
        opt.load_state_dict(start[1])
        s.load_state_dict(start[2])
    first = 0 if start is None else N
    lrs = []
    for k in range(first, first + steps):
        loss = _set_grads(params, k)
        opt.step()
        if isinstance(s, sched.ReduceLROnPlateau):
            s.step(round(loss, 1) if k < 5 else 100.0)  # plateaus, then gets worse: the lr is cut
        else:
            s.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    return params, opt, s, lrs


@pytest.mark.parametrize("name, make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_resume_is_bitwise_identical(name, make):
    straight, _, _, lrs = _sched_run(make, N + M)
    first, opt, s, _ = _sched_run(make, N)
    saved = ([p.numpy().copy() for p in first], copy.deepcopy(opt.state_dict()), copy.deepcopy(s.state_dict()))
    resumed, _, _, lrs2 = _sched_run(make, M, start=saved)
    assert lrs2 == lrs[N:]
    for got, want in zip(resumed, straight):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- SparseAdam: Tensor.grad holds dense tensors only, so the sparse gradient is put in place directly ----

def _sparse_run(steps, start=None):
    from test_lbfgs_sparse import _Coo

    p = fb.tensor(_W0.tolist(), dtype=fb.float64) if start is None else fb.tensor(start[0].tolist(), dtype=fb.float64)
    opt = optim.SparseAdam([p], lr=0.05)
    if start is not None:
        opt.load_state_dict(start[1])
    first = 0 if start is None else N
    for k in range(first, first + steps):
        rows = [k % 3, (k + 1) % 3, k % 3]  # a repeated row: coalesced
        p._grad = _Coo(rows, [(np.sin(k + r) * np.arange(1, 5)).tolist() for r in rows])
        opt.step()
    return p, opt


def test_sparse_adam_resume_is_bitwise_identical():
    straight, _ = _sparse_run(N + M)
    first, opt = _sparse_run(N)
    resumed, _ = _sparse_run(M, start=(first.numpy().copy(), copy.deepcopy(opt.state_dict())))
    np.testing.assert_array_equal(resumed.numpy(), straight.numpy())

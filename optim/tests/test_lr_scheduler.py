"""Each scheduler's learning-rate sequence against its formula; state dicts; the step-order warning."""
from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim
from flambeau.optim import lr_scheduler as L

N = 30


def make_opt(lr=0.1, cls=optim.SGD, groups=1, **kwargs):
    params = [{"params": [fb.tensor([1.0])], "lr": lr * (i + 1)} for i in range(groups)]
    return cls(params, lr=lr, **kwargs)


def lrs(scheduler, opt, n=N, step_args=()):
    """The lr of each group at epochs 0..n-1 (optimizer.step, then scheduler.step)."""
    out = []
    for _ in range(n):
        out.append([g["lr"] for g in opt.param_groups])
        opt.step()
        scheduler.step(*step_args)
    return np.array(out)


def check(got, formula, n=N, base=(0.1,)):
    want = np.array([[formula(t, b) for b in base] for t in range(n)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_lambda_lr():
    opt = make_opt(groups=2)
    s = L.LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])
    got = lrs(s, opt)
    want = np.array([[0.1 * 0.9 ** t, 0.2 / (t + 1)] for t in range(N)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        L.LambdaLR(opt, [lambda e: 1.0])


def test_multiplicative_lr():
    opt = make_opt()
    s = L.MultiplicativeLR(opt, lambda e: 0.95)
    check(lrs(s, opt), lambda t, b: b * 0.95 ** t)


def test_step_lr():
    opt = make_opt()
    s = L.StepLR(opt, step_size=7, gamma=0.5)
    check(lrs(s, opt), lambda t, b: b * 0.5 ** (t // 7))


def test_multistep_lr():
    opt = make_opt()
    s = L.MultiStepLR(opt, milestones=[5, 12, 12, 20], gamma=0.3)
    check(lrs(s, opt), lambda t, b: b * 0.3 ** sum(m <= t for m in [5, 12, 12, 20]))


def test_constant_lr():
    opt = make_opt()
    s = L.ConstantLR(opt, factor=0.25, total_iters=6)
    check(lrs(s, opt), lambda t, b: b * (0.25 if t < 6 else 1.0))
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.ConstantLR(opt, factor=1.5)


def test_linear_lr():
    opt = make_opt()
    s = L.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=10)
    check(lrs(s, opt), lambda t, b: b * (0.2 + 0.7 * min(t, 10) / 10))
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        L.LinearLR(opt, start_factor=0)


def test_exponential_lr():
    opt = make_opt()
    s = L.ExponentialLR(opt, gamma=0.9)
    check(lrs(s, opt), lambda t, b: b * 0.9 ** t)


def test_polynomial_lr():
    opt = make_opt()
    s = L.PolynomialLR(opt, total_iters=12, power=2.0)
    check(lrs(s, opt), lambda t, b: b * (1 - min(t, 12) / 12) ** 2)


def test_cosine_annealing_lr():
    opt = make_opt()
    s = L.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    # Past T_max the (chainable) schedule rises back along the cosine, as PyTorch's does.
    check(lrs(s, opt), lambda t, b: 0.01 + (b - 0.01) * (1 + math.cos(math.pi * t / 10)) / 2)


def test_cosine_annealing_warm_restarts():
    opt = make_opt()
    s = L.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.001)

    def formula(t, b):
        t_i, t_cur = 4, t
        while t_cur >= t_i:
            t_cur -= t_i
            t_i *= 2
        return 0.001 + (b - 0.001) * (1 + math.cos(math.pi * t_cur / t_i)) / 2

    check(lrs(s, opt), formula)
    s.step(5.5)  # fractional epochs
    assert s.get_last_lr()[0] == pytest.approx(formula(5.5, 0.1))
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        L.CosineAnnealingWarmRestarts(opt, T_0=0)


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic_lr(mode):
    opt = make_opt(momentum=0.9)
    s = L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=6, mode=mode, gamma=0.95)

    def scale(t):
        cycle = math.floor(1 + t / 10)
        x = 1 + t / 10 - cycle
        pos = x / 0.4 if x <= 0.4 else (x - 1) / (0.4 - 1)
        f = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": 0.95 ** t}[mode]
        return pos * f

    got, momenta = [], []
    for _ in range(N):
        got.append([opt.param_groups[0]["lr"]])
        momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        s.step()
    check(np.array(got), lambda t, b: 0.01 + 0.09 * scale(t))
    np.testing.assert_allclose(momenta, [0.9 - 0.1 * scale(t) for t in range(N)], rtol=1e-12)


def test_cyclic_lr_cycles_adam_beta1():
    opt = make_opt(cls=optim.Adam)
    L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="must support momentum"):
        L.CyclicLR(make_opt(cls=optim.Adagrad), base_lr=0.01, max_lr=0.1)


@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize("anneal", ["cos", "linear"])
def test_one_cycle_lr(anneal, three_phase):
    opt = make_opt(momentum=0.9)
    total = 20
    s = L.OneCycleLR(opt, max_lr=1.0, total_steps=total, pct_start=0.25, anneal_strategy=anneal,
                     three_phase=three_phase, div_factor=10.0, final_div_factor=100.0)
    init, peak, low = 0.1, 1.0, 0.001

    def ann(a, b, pct):
        return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1) if anneal == "cos" else (b - a) * pct + a

    def formula(t, _b):
        if three_phase:
            e1, e2, e3 = 0.25 * total - 1, 2 * 0.25 * total - 2, total - 1
            if t <= e1:
                return ann(init, peak, t / e1)
            if t <= e2:
                return ann(peak, init, (t - e1) / (e2 - e1))
            return ann(init, low, (t - e2) / (e3 - e2))
        e1, e2 = 0.25 * total - 1, total - 1
        return ann(init, peak, t / e1) if t <= e1 else ann(peak, low, (t - e1) / (e2 - e1))

    check(lrs(s, opt, n=total), formula, n=total)
    with pytest.raises(ValueError, match="Tried to step 21 times"):
        opt.step()
        s.step()
    with pytest.raises(ValueError, match="total_steps OR"):
        L.OneCycleLR(opt, max_lr=1.0)


def test_reduce_lr_on_plateau():
    opt = make_opt(groups=2)
    s = L.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=[0.0, 0.15])
    metrics = [10, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8]
    seen = []
    for m in metrics:
        opt.step()
        s.step(m)
        seen.append(s.get_last_lr())
    # patience 2: the third epoch without improvement reduces; the cooldown epoch after it counts no bad epoch
    assert [x[0] for x in seen] == [0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025]
    assert [x[1] for x in seen][-1] == 0.15  # clamped at its min_lr
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        L.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode foo is unknown"):
        L.ReduceLROnPlateau(opt, mode="foo")


def test_reduce_lr_on_plateau_max_abs():
    opt = make_opt()
    s = L.ReduceLROnPlateau(opt, mode="max", threshold=0.5, threshold_mode="abs", patience=0)
    for m in [1.0, 1.4, 2.0]:  # 1.4 is not above best + 0.5: reduced; 2.0 is
        s.step(m)
    assert s.get_last_lr() == [pytest.approx(0.01)]
    assert s.best == 2.0


def test_sequential_lr():
    opt = make_opt()
    s1 = L.ConstantLR(opt, factor=0.1, total_iters=2)
    s2 = L.ExponentialLR(opt, gamma=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the switch steps the next scheduler with an epoch (deprecated API)
        s = L.SequentialLR(opt, schedulers=[s1, s2], milestones=[5])
        got = lrs(s, opt, n=12)
    check(got, lambda t, b: b * 0.1 if t < 2 else (b if t < 5 else b * 0.9 ** (t - 5)), n=12)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        L.SequentialLR(opt, schedulers=[s1, s2], milestones=[])


def test_chained_scheduler():
    opt = make_opt()
    s = L.ChainedScheduler([L.ConstantLR(opt, factor=0.1, total_iters=2), L.ExponentialLR(opt, gamma=0.9)])
    check(lrs(s, opt, n=10), lambda t, b: b * 0.9 ** t * (0.1 if t < 2 else 1.0), n=10)
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        L.ChainedScheduler([L.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="same optimizer"):
        L.ChainedScheduler([L.StepLR(opt, 2), L.StepLR(make_opt(), 2)])


def test_swalr():
    from flambeau.optim.swa_utils import SWALR

    opt = make_opt(lr=1.0)
    s = SWALR(opt, swa_lr=0.1, anneal_epochs=5, anneal_strategy="linear")
    got = lrs(s, opt, n=10)
    want = [[0.1 * min(1, t / 5) + 1.0 * (1 - min(1, t / 5))] for t in range(10)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    opt = make_opt(lr=1.0)
    s = SWALR(opt, swa_lr=0.1, anneal_epochs=4)
    got = lrs(s, opt, n=8)
    alpha = [(1 - math.cos(math.pi * min(1, t / 4))) / 2 for t in range(8)]
    np.testing.assert_allclose(got[:, 0], [0.1 * a + 1.0 * (1 - a) for a in alpha], rtol=1e-12)


# -- warnings, state, get_last_lr ---------------------------------------------------------

def test_warns_when_scheduler_steps_before_optimizer():
    opt = make_opt()
    s = L.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        s.step()
    opt2 = make_opt()
    s2 = L.StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


def test_get_lr_outside_step_warns():
    opt = make_opt()
    s = L.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_epoch_argument_uses_closed_form_with_deprecation_warning():
    opt = make_opt()
    s = L.StepLR(opt, step_size=3, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
        s.step(7)
    assert s.get_last_lr() == [pytest.approx(0.1 * 0.25)]


@pytest.mark.parametrize("make", [
    lambda o: L.StepLR(o, step_size=3, gamma=0.5),
    lambda o: L.MultiStepLR(o, milestones=[2, 5]),
    lambda o: L.CosineAnnealingLR(o, T_max=7),
    lambda o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3),
    lambda o: L.OneCycleLR(o, max_lr=0.5, total_steps=40),
    lambda o: L.PolynomialLR(o, total_iters=8),
    lambda o: L.LinearLR(o, total_iters=8),
    lambda o: L.LambdaLR(o, lambda e: 0.9 ** e),
])
def test_scheduler_state_dict_round_trip(make):
    opt = make_opt(momentum=0.9)
    s = make(opt)
    for _ in range(6):
        opt.step()
        s.step()
    saved_sd = pickle.loads(pickle.dumps(s.state_dict()))
    saved_groups = [dict((k, v) for k, v in g.items() if k != "params") for g in opt.param_groups]
    want = lrs(s, opt, n=8)

    opt2 = make_opt(momentum=0.9)
    s2 = make(opt2)
    for g, saved in zip(opt2.param_groups, saved_groups):
        g.update(saved)
    s2.load_state_dict(saved_sd)
    opt2._opt_called = True
    got = lrs(s2, opt2, n=8)
    np.testing.assert_array_equal(got, want)
    assert "optimizer" not in saved_sd


def test_tensor_lr_is_filled_in_place():
    p = fb.tensor([1.0])
    lr = fb.tensor(0.1)
    opt = optim.SGD([p], lr=lr)
    s = L.ExponentialLR(opt, gamma=0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.05)


def test_resume_needs_initial_lr():
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(make_opt(), step_size=2, last_epoch=3)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        L.StepLR(object(), step_size=2)

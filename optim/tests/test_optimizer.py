"""The Optimizer base: groups, errors, zero_grad, hooks, state dicts, repr."""
from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim

from optim_problems import PROBLEMS, as_param

ALL = [
    (optim.SGD, dict(lr=1e-2, momentum=0.9, nesterov=True)),
    (optim.Adam, dict(lr=1e-2, amsgrad=True)),
    (optim.AdamW, dict(lr=1e-2)),
    (optim.Adamax, dict(lr=1e-2)),
    (optim.NAdam, dict(lr=1e-2)),
    (optim.RAdam, dict(lr=1e-2)),
    (optim.Adadelta, dict()),
    (optim.Adagrad, dict(lr=1e-1, lr_decay=1e-2)),
    (optim.RMSprop, dict(lr=1e-3, momentum=0.9, centered=True)),
    (optim.Rprop, dict()),
    (optim.ASGD, dict(t0=3)),
    (optim.Adafactor, dict()),
]


def _grad_step(opt, params, grad_fn):
    for p in params:
        p.grad = fb.tensor(grad_fn(p.numpy()).tolist(), dtype=p.dtype)
    opt.step()


# -- construction and groups -----------------------------------------------------------

def test_defaults_fill_groups_and_per_group_options():
    a, b = fb.tensor([1.0]), fb.tensor([2.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1e-3}], lr=1e-2, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 1e-2
    assert opt.param_groups[1]["lr"] == 1e-3
    assert opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[1]["params"][0] is b
    assert opt.defaults["lr"] == 1e-2


def test_add_param_group():
    a, b = fb.tensor([1.0]), fb.tensor([2.0])
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": [b], "betas": (0.5, 0.6)})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[1]["betas"] == (0.5, 0.6)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    assert len(opt.param_groups) == 2


def test_named_parameters():
    a, b = fb.tensor([1.0]), fb.tensor([2.0])
    opt = optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a, b] or opt.param_groups[0]["params"][0] is a
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


class _NeedsLr(optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": optim.optimizer.required})


@pytest.mark.parametrize("make, message", [
    (lambda p: optim.SGD([p], lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam([p], lr=-1.0), "Invalid learning rate"),
    (lambda p: optim.Adam([p], betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam([p], betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.AdamW([p], betas=(0.9, 1.5)), "Invalid beta parameter at index 1"),
    (lambda p: optim.NAdam([p], betas=(-0.5, 0.9)), "Invalid beta parameter at index 0"),
    (lambda p: optim.RAdam([p], betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    (lambda p: optim.Adamax([p], betas=(1.2, 0.9)), "Invalid beta parameter at index 0"),
    (lambda p: optim.SparseAdam([p], betas=(1.2, 0.9)), "Invalid beta parameter at index 0"),
    (lambda p: optim.Adam([p], eps=-1.0), "Invalid epsilon value"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=-0.5), "Invalid momentum value"),
    (lambda p: optim.SGD([p], lr=0.1, weight_decay=-1), "Invalid weight_decay value"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: optim.Adagrad([p], lr_decay=-1), "Invalid lr_decay value"),
    (lambda p: optim.Adagrad([p], initial_accumulator_value=-1), "Invalid initial_accumulator_value"),
    (lambda p: optim.RMSprop([p], alpha=-1), "Invalid alpha value"),
    (lambda p: optim.Adadelta([p], rho=1.5), "Invalid rho value"),
    (lambda p: optim.Rprop([p], etas=(1.5, 1.2)), "Invalid eta values"),
    (lambda p: optim.Adafactor([p], beta2_decay=0.5), "beta2_decay should be <= 0"),
    (lambda p: optim.Adafactor([p], d=0.5), "Clipping threshold d should be >= 1"),
    (lambda p: optim.LBFGS([p], lr=-1), "Invalid learning rate"),
    (lambda p: optim.SGD([p, p], lr=0.1), "duplicate parameters"),
    (lambda p: optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1), "more than one parameter group"),
    (lambda p: optim.SGD([{"params": [p]}, {"params": [fb.tensor([1.0])], "lr": -1.0}], lr=0.1),
     "Invalid learning rate"),
    (lambda p: optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda p: _NeedsLr([{"params": [p]}]), "parameter group didn't specify a value of required optimization "
     "parameter lr"),
])
def test_bad_arguments_raise_value_error(make, message):
    p = fb.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=re.escape(message)):
        make(p)


def test_non_leaf_parameter_is_refused():
    if not hasattr(fb, "no_grad"):
        pytest.skip("without flambeau-core-autograd every tensor is a leaf")
    leaf = fb.tensor([1.0, 2.0], requires_grad=True)
    non_leaf = leaf * 2
    assert not non_leaf.is_leaf
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([leaf, non_leaf], lr=0.1)
    opt = optim.SGD([non_leaf], lr=0.1, differentiable=True)  # allowed when the step is differentiated
    assert opt.param_groups[0]["params"][0] is non_leaf


def test_non_leaf_check_uses_is_leaf(monkeypatch):
    p = fb.tensor([1.0])
    monkeypatch.setattr(type(p), "is_leaf", property(lambda self: False))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([p])


def test_bad_param_types():
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(fb.tensor([1.0]), lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {fb.tensor([1.0])}}], lr=0.1)
    with pytest.raises(RuntimeError, match="cannot be `True` together"):
        optim.Adam([fb.tensor([1.0])], foreach=True, fused=True)


def test_bad_group_added_changes_nothing():
    a = fb.tensor([1.0])
    opt = optim.SGD([a], lr=0.1)
    before = opt.state_dict()
    for group in ({"params": [a]}, {"params": [fb.tensor([1.0])], "lr": -1}, {"params": [fb.tensor([1.0])] * 2}):
        with pytest.raises(ValueError):
            opt.add_param_group(group)
    assert opt.state_dict() == before


# -- zero_grad, step, hooks ------------------------------------------------------------

def test_zero_grad():
    a = fb.tensor([1.0, 2.0])
    opt = optim.SGD([a], lr=0.1)
    a.grad = fb.tensor([3.0, 4.0])
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_hooks_and_global_hooks():
    from flambeau.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    a = fb.tensor([1.0])
    a.grad = fb.tensor([1.0])
    opt = optim.SGD([a], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", a.item())))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", a.item())))
    h3 = register_optimizer_step_pre_hook(lambda o, args, kwargs: calls.append(("global-pre",)))
    h4 = register_optimizer_step_post_hook(lambda o, args, kwargs: calls.append(("global-post",)))
    opt.step()
    assert calls[0] == ("global-pre",) and calls[1] == ("pre", 1.0)
    assert calls[2][0] == "post" and abs(calls[2][1] - 0.9) < 1e-6 and calls[3] == ("global-post",)
    for h in (h1, h2, h3, h4):
        h.remove()
    calls.clear()
    opt.step()
    assert calls == []


def test_pre_hook_may_replace_arguments():
    a = fb.tensor([1.0])
    opt = optim.SGD([a], lr=0.1)

    def closure():
        a.grad = fb.tensor([1.0])
        return 7.0

    opt.register_step_pre_hook(lambda o, args, kwargs: ((closure,), {}))
    assert opt.step() == 7.0


def test_repr_lists_groups():
    opt = optim.SGD([{"params": [fb.tensor([1.0])]}, {"params": [fb.tensor([1.0])], "lr": 0.5}], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "Parameter Group 1\n" in text and "    lr: 0.5\n" in text and text.endswith(")")
    assert "params" not in text


# -- state dicts -----------------------------------------------------------------------

@pytest.mark.parametrize("cls, kwargs", ALL, ids=lambda x: getattr(x, "__name__", ""))
def test_state_dict_round_trip_continues_bit_for_bit(cls, kwargs):
    grad_fn, x0 = PROBLEMS["regression"]
    params = [as_param(x0, fb.float32), as_param(x0[:, 0], fb.float32)]
    opt = cls(params, **kwargs)
    for _ in range(5):
        _grad_step(opt, params, lambda x: grad_fn(x) if x.ndim == 2 else x * 0.3 - 1)
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    saved_params = [p.clone() for p in params]
    for _ in range(5):
        _grad_step(opt, params, lambda x: grad_fn(x) if x.ndim == 2 else x * 0.3 - 1)
    expected = [p.numpy().copy() for p in params]

    resumed = [p.clone() for p in saved_params]
    opt2 = cls(resumed, **kwargs)
    opt2.load_state_dict(saved)
    for _ in range(5):
        _grad_step(opt2, resumed, lambda x: grad_fn(x) if x.ndim == 2 else x * 0.3 - 1)
    for got, want in zip(resumed, expected):
        assert np.array_equal(got.numpy(), want)  # bit for bit


def test_state_dict_layout():
    a, b = fb.tensor([1.0, 2.0]), fb.tensor([3.0])
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}])
    a.grad, b.grad = fb.tensor([1.0, 1.0]), fb.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"].dtype == fb.float32 and sd["state"][0]["step"].item() == 1.0
    assert sd["param_groups"][0]["params"] == [0] and sd["param_groups"][1]["params"] == [1]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)


def test_load_state_dict_casts_state_to_param_dtype():
    a = fb.tensor([1.0, 2.0], dtype=fb.float64)
    opt = optim.Adam([a])
    a.grad = fb.tensor([1.0, 1.0], dtype=fb.float64)
    opt.step()
    sd = opt.state_dict()
    b = fb.tensor([1.0, 2.0], dtype=fb.float32)
    opt2 = optim.Adam([b])
    opt2.load_state_dict(sd)
    assert opt2.state[b]["exp_avg"].dtype == fb.float32
    assert opt2.state[b]["step"].dtype == fb.float32


@pytest.mark.parametrize("mutate, message", [
    (lambda sd: sd["param_groups"].append(dict(sd["param_groups"][0])), "different number of parameter groups"),
    (lambda sd: sd["param_groups"][0]["params"].append(5), "doesn't match the size"),
    (lambda sd: sd["state"][0].__setitem__("exp_avg", fb.zeros(7)), "shape"),
])
def test_mismatched_load_state_dict_raises_and_changes_nothing(mutate, message):
    a, b = fb.tensor([1.0, 2.0]), fb.tensor([1.0, 2.0])
    src = optim.Adam([a], lr=0.5)
    a.grad = fb.tensor([1.0, 1.0])
    src.step()
    sd = copy.deepcopy(src.state_dict())
    mutate(sd)
    dst = optim.Adam([b], lr=0.1)
    before_groups = copy.deepcopy([{k: v for k, v in g.items() if k != "params"} for g in dst.param_groups])
    with pytest.raises(ValueError, match=message):
        dst.load_state_dict(sd)
    assert [{k: v for k, v in g.items() if k != "params"} for g in dst.param_groups] == before_groups
    assert len(dst.state) == 0


def test_state_dict_hooks():
    a = fb.tensor([1.0])
    opt = optim.SGD([a], lr=0.1)
    seen = []
    opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    sd = opt.state_dict()
    assert sd["extra"] == 1 and seen == ["pre"]
    opt.load_state_dict(sd)
    assert seen == ["pre", "loaded"]


def test_differentiable_flag_runs_composite():
    # With differentiable=True the step runs the composite with grad mode as it is (no no_grad).
    a = fb.tensor([1.0, 2.0])
    opt = optim.Adam([a], lr=0.1, differentiable=True)
    a.grad = fb.tensor([1.0, -1.0])
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.9, 2.1], rtol=1e-5)
    with pytest.raises(RuntimeError, match="differentiable"):
        optim.Adam([a], foreach=True, differentiable=True)


def test_warning_free_default_step():
    a = fb.tensor([1.0])
    a.grad = fb.tensor([1.0])
    opt = optim.AdamW([a])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()


def test_subclass_calling_super_step_runs_hooks_once():
    class MyAdam(optim.Adam):
        def step(self, closure=None):
            return super().step(closure)

    a = fb.tensor([1.0])
    a.grad = fb.tensor([1.0])
    opt = MyAdam([a])
    calls = []
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(1))
    opt.step()
    assert calls == [1]


def test_optim_works_with_its_op_plugin_disabled():
    # Without the op plugin the composites run directly; the CPU backend's kernels stay unused.
    import subprocess
    import sys

    code = ("import flambeau as fb, flambeau.optim as o\n"
            "assert 'optim_adam' not in fb.ops.declarations()\n"
            "p = fb.tensor([1.0, 2.0]); p.grad = fb.tensor([1.0, 1.0])\n"
            "o.Adam([p], lr=0.1).step(); print(p.tolist())\n")
    env = {**__import__("os").environ, "FLAMBEAU_DISABLE_PLUGINS": "optim"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert np.allclose(eval(out.stdout), [0.9, 1.9], rtol=1e-5)


def test_training_with_autograd():
    if not hasattr(fb, "no_grad"):
        pytest.skip("flambeau-core-autograd is not installed")
    rng = np.random.default_rng(0)
    x = fb.tensor(rng.normal(size=(32, 3)), dtype=fb.float32)
    true_w = fb.tensor([[1.0], [-2.0], [0.5]])
    y = fb.matmul(x, true_w)
    w = fb.zeros(3, 1, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
    for _ in range(300):
        opt.zero_grad()
        loss = ((fb.matmul(x, w) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    np.testing.assert_allclose(w.detach().numpy(), true_w.numpy(), atol=1e-3)


def test_differentiable_step_is_differentiated_through():
    if not hasattr(fb, "no_grad"):
        pytest.skip("flambeau-core-autograd is not installed")
    w0 = fb.tensor([1.0, 3.0], requires_grad=True)
    w = w0 * 1.0
    w.grad = w0 * 2  # the gradient of w0 ** 2, kept in the graph
    optim.SGD([w], lr=0.1, differentiable=True).step()
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 2.4], rtol=1e-6)
    w.sum().backward()
    np.testing.assert_allclose(w0.grad.numpy(), [0.8, 0.8], rtol=1e-6)  # d(w0 - 0.1 * 2 w0)/dw0


def test_groups_given_as_generators():
    a, b = fb.tensor([1.0]), fb.tensor([2.0])
    opt = optim.SGD([{"params": (p for p in [a])}, {"params": iter([b]), "lr": 0.5}], lr=0.1)
    assert opt.param_groups[0]["params"] == [a] or opt.param_groups[0]["params"][0] is a
    assert opt.param_groups[1]["params"][0] is b
    opt.add_param_group({"params": (p for p in [fb.tensor([3.0])])})
    assert len(opt.param_groups[2]["params"]) == 1

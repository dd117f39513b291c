"""Grad modes and process-wide settings that belong to core-tensor.

The grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` and the
``is_*`` queries) live in core-tensor: they must work, as context managers and decorators, with
core-tensor and a backend alone. The subprocess tests disable the autograd plugin so that they
pass whether or not flambeau-core-autograd is installed. The default dtype is process-wide, as in
PyTorch; grad mode is thread-local.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import flambeau as fb

WITHOUT_AUTOGRAD = """
import flambeau as fb
from flambeau.ops import _dispatch
assert _dispatch.autograd_engine() is None, "autograd is loaded"
out = []
x = fb.tensor([1.0, 2.0])
out.append(fb.is_grad_enabled())
with fb.no_grad():
    out.append(fb.is_grad_enabled())
    with fb.enable_grad():
        out.append(fb.is_grad_enabled())
    out.append((x * 2).tolist())
out.append(fb.is_grad_enabled())
with fb.set_grad_enabled(False):
    out.append(fb.is_grad_enabled())
fb.set_grad_enabled(False)
out.append(fb.is_grad_enabled())
fb.set_grad_enabled(True)

@fb.no_grad()
def f(t):
    return fb.is_grad_enabled(), (t + 1).tolist()

@fb.inference_mode()
def g(t):
    return fb.is_inference_mode_enabled(), (t * 3).is_inference()

out.append(f(x))
out.append(g(x))
with fb.inference_mode():
    y = x * 2
    out.append((fb.is_inference_mode_enabled(), fb.is_grad_enabled(), y.is_inference(), x.is_inference()))
try:
    y.add_(1)
except RuntimeError as e:
    out.append("Inplace update to inference tensor outside InferenceMode" in str(e))
out.append((fb.is_inference_mode_enabled(), y[0].is_inference(), y.tolist()))
print(repr(out))
"""

EXPECTED = [True, False, True, [2.0, 4.0], True, False, False, (False, [2.0, 3.0]), (True, True),
            (True, False, True, False), True, (False, True, [2.0, 4.0])]


def test_grad_modes_work_without_autograd():
    env = dict(os.environ, FLAMBEAU_DISABLE_PLUGINS="autograd")
    out = subprocess.run([sys.executable, "-c", WITHOUT_AUTOGRAD], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert eval(out.stdout) == EXPECTED  # noqa: S307 - our own script's repr


def test_grad_modes_are_core_tensors():
    from flambeau import _grad_mode

    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
                 "is_inference_mode_enabled"):
        assert getattr(fb, name) is getattr(_grad_mode, name)


def test_grad_mode_is_thread_local():
    seen = []
    entered, done = threading.Event(), threading.Event()

    def other():
        entered.wait()
        seen.append((fb.is_grad_enabled(), fb.is_inference_mode_enabled()))
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with fb.inference_mode():
        entered.set()
        done.wait()
    t.join()
    assert seen == [(True, False)]


def test_set_grad_enabled_checks_its_argument():
    with pytest.raises(TypeError, match="must be bool"):
        fb.set_grad_enabled(1)
    assert fb.is_grad_enabled()


# -- inference tensors -----------------------------------------------------------------------

def test_inference_tensors_and_their_views():
    x = fb.ones(3)
    with fb.inference_mode():
        y = x + 1
        z = fb.zeros(2)
        v = x[1:]  # a view of a normal tensor stays normal
    assert y.is_inference() and z.is_inference() and not x.is_inference() and not v.is_inference()
    assert y[1:].is_inference() and y.view(3, 1).is_inference() and y.detach().is_inference()
    assert not (y + 1).is_inference() and not y.clone().is_inference()
    with fb.inference_mode(False):
        assert not (x + 1).is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        y._version


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1), lambda t: t.zero_(), lambda t: t.copy_(fb.ones(3)), lambda t: t.__setitem__(0, 5.0),
    lambda t: t[1:].mul_(2), lambda t: fb.add(fb.ones(3), 1, out=t), lambda t: t.fill_(2.0),
])
def test_inplace_write_to_inference_tensor_outside_inference_mode_raises(write):
    with fb.inference_mode():
        y = fb.arange(3.0)
        write(y)  # inside inference mode: allowed
        before = y.tolist()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        write(y)
    assert y.tolist() == before  # refused before anything was written


def test_inplace_write_to_normal_tensor_inside_inference_mode_counts_a_version():
    x = fb.zeros(2)
    with fb.inference_mode():
        x.add_(1)
    assert x._version == 1 and x.tolist() == [1.0, 1.0]


def test_inference_mode_in_one_thread_makes_no_inference_tensors_in_another():
    made = []
    go, done = threading.Event(), threading.Event()

    def other():
        go.wait()
        made.append(fb.ones(2) + 1)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with fb.inference_mode():
        go.set()
        done.wait()
    t.join()
    assert not made[0].is_inference()


# -- process-wide settings -------------------------------------------------------------------

def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_default_dtype_is_process_wide():
    try:
        _in_thread(lambda: fb.set_default_dtype(fb.float64))
        assert fb.get_default_dtype() is fb.float64
        assert fb.tensor([1.5]).dtype is fb.float64
        assert _in_thread(lambda: fb.zeros(1).dtype) is fb.float64
    finally:
        fb.set_default_dtype(fb.float32)
    assert _in_thread(fb.get_default_dtype) is fb.float32


def test_print_options_are_process_wide():
    try:
        _in_thread(lambda: fb.set_printoptions(precision=2))
        assert repr(fb.tensor([1.23456])) == "tensor([1.23])"
    finally:
        fb.set_printoptions(profile="default")


def test_num_threads_is_process_wide():
    before = fb.get_num_threads()
    try:
        _in_thread(lambda: fb.set_num_threads(1))
        assert fb.get_num_threads() == 1
        _in_thread(lambda: fb.set_num_threads(2))
        assert fb.get_num_threads() == 2 and _in_thread(fb.get_num_threads) == 2
    finally:
        fb.set_num_threads(before)


def test_default_device_is_thread_local_as_in_pytorch():
    # torch.set_default_device keeps its device in a threading.local: a thread's choice stays there.
    pytest.importorskip("flambeau_meta")
    seen = _in_thread(lambda: (fb.set_default_device("meta"), fb.get_default_device().type, fb.zeros(1).device.type))
    assert seen[1:] == ("meta", "meta")
    assert fb.get_default_device().type == "cpu" and fb.zeros(1).device.type == "cpu"

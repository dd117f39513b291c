"""Grad modes: context managers, decorators, thread-locality, top-level aliases."""
from __future__ import annotations

import threading

import flambeau as fb
from flambeau.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled


def test_top_level_aliases():
    assert fb.no_grad is no_grad and fb.enable_grad is enable_grad and fb.is_grad_enabled is is_grad_enabled
    assert fb.set_grad_enabled is set_grad_enabled and fb.inference_mode is inference_mode


def test_no_grad_and_enable_grad_nest():
    x = fb.tensor([1.0], requires_grad=True)
    with no_grad():
        assert not is_grad_enabled()
        with enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert is_grad_enabled()


def test_decorators():
    x = fb.tensor([1.0], requires_grad=True)

    @no_grad()
    def f(t):
        return t * 2

    @fb.inference_mode()
    def g(t):
        return t * 2

    @no_grad()
    def gen(t):
        yield t * 2
        yield t * 3

    assert not f(x).requires_grad and not g(x).requires_grad
    assert all(not y.requires_grad for y in gen(x))
    assert is_grad_enabled()


def test_set_grad_enabled_function_and_context():
    set_grad_enabled(False)
    assert not is_grad_enabled()
    set_grad_enabled(True)
    with set_grad_enabled(False):
        assert not is_grad_enabled()
    assert is_grad_enabled()


def test_inference_mode():
    x = fb.tensor([1.0], requires_grad=True)
    with inference_mode():
        assert fb.is_inference_mode_enabled() and not (x * 2).requires_grad
    with inference_mode(False):
        assert (x * 2).requires_grad
    assert not fb.is_inference_mode_enabled()


def test_thread_local():
    seen = []
    with no_grad():
        t = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]

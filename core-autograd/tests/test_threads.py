"""Autograd under several Python threads: accumulation into ``.grad`` is atomic per tensor.

PyTorch's AccumulateGrad holds a lock around its read-modify-write; without one, two threads
adding into the same ``.grad`` (an in-place add that runs with the GIL released), or both seeing
no ``.grad`` yet and each creating one, lose gradient.
"""
from __future__ import annotations

import threading

import numpy as np

import flambeau as fb

THREADS, REPEATS = 4, 10


def _run_threads(fn, n=THREADS):
    barrier = threading.Barrier(n)
    errors = []

    def body():
        try:
            barrier.wait()
            for _ in range(REPEATS):
                fn()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=body) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_concurrent_backward_into_one_leaf_is_exact():
    for _ in range(3):
        W = fb.zeros(2_000_000, requires_grad=True)
        _run_threads(lambda W=W: (W * 1.0).sum().backward())
        g = W.grad.numpy()
        assert g.min() == g.max() == THREADS * REPEATS


def test_concurrent_backward_into_retained_non_leaf_is_exact():
    W = fb.zeros(200_000, requires_grad=True)
    y = W * 2.0
    y.retain_grad()
    _run_threads(lambda: y.sum().backward(retain_graph=True))
    assert np.all(y.grad.numpy() == THREADS * REPEATS)
    assert np.all(W.grad.numpy() == 2 * THREADS * REPEATS)


def test_concurrent_backward_with_inputs_into_non_leaf_is_exact():
    W = fb.zeros(200_000, requires_grad=True)
    y = W * 3.0
    _run_threads(lambda: (y * 1.0).sum().backward(inputs=[y], retain_graph=True))
    assert np.all(y.grad.numpy() == THREADS * REPEATS)
    assert W.grad is None


def test_hooks_run_once_per_backward_under_threads():
    W = fb.zeros(100_000, requires_grad=True)
    lock = threading.Lock()
    calls = {"leaf": 0, "node": 0, "post": 0}

    def count(key):
        with lock:
            calls[key] += 1

    W.register_hook(lambda g: count("leaf"))
    W.register_post_accumulate_grad_hook(lambda t: count("post"))

    def step():
        y = W * 1.0
        y.register_hook(lambda g: (count("node"), g * 2)[1])
        y.sum().backward()

    _run_threads(step)
    n = THREADS * REPEATS
    assert calls == {"leaf": n, "node": n, "post": n}
    assert np.all(W.grad.numpy() == 2 * n)


def test_grad_mode_of_one_thread_does_not_reach_another():
    x = fb.ones(3, requires_grad=True)
    results = []
    inside, checked = threading.Event(), threading.Event()

    def other():
        inside.wait()
        results.append((x * 2).requires_grad)
        checked.set()

    t = threading.Thread(target=other)
    t.start()
    with fb.no_grad():
        inside.set()
        checked.wait()
        results.append((x * 2).requires_grad)
    t.join()
    assert results == [True, False]

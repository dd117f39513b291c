"""Memory: saved tensors die with the graph; repeated steps keep resident memory flat."""
from __future__ import annotations

import gc
import resource
import sys
import weakref

import numpy as np

import flambeau as fb


def _rss_kib() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (resource.getpagesize() // 1024)
    except OSError:  # not Linux: the peak is the best we have
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // (1024 if sys.platform == "darwin" else 1)


def test_saved_tensors_released_when_graph_freed():
    x = fb.tensor(np.ones(1000), requires_grad=True)
    h = x * 2
    y = h.exp()  # saves its output (an alias of y's storage)
    z = (h * y).sum()  # saves h and y
    ref_h = weakref.ref(h)
    node = z.grad_fn.next_functions[0][0]  # MulBackward0, holding h and y
    del h, y
    assert ref_h() is not None  # kept alive by the graph
    z.backward()
    gc.collect()
    assert ref_h() is None or all(s.tensor is None for s in node._all_saved())
    del z, node
    gc.collect()
    assert ref_h() is None


def test_graph_dies_with_its_output_without_gc():
    x = fb.tensor(np.ones(10), requires_grad=True)
    y = (x * 2).exp()
    ref = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert ref() is None  # no reference cycles: freed by reference counting alone
    finally:
        gc.enable()


def test_training_loop_keeps_rss_flat():
    rng = np.random.default_rng(0)
    w = fb.tensor(rng.standard_normal((64, 64)), requires_grad=True)
    x = fb.tensor(rng.standard_normal((32, 64)))

    def step():
        loss = ((x @ w).clamp(min=0) * 0.5).exp().mean()
        loss.backward()
        with fb.no_grad():
            w.sub_(w.grad * 1e-3)
        w.grad = None

    for _ in range(100):  # warm up allocator and caches
        step()
    gc.collect()
    before = _rss_kib()
    for _ in range(1000):
        step()
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 4 * 1024, f"resident memory grew by {grown} KiB over 1000 steps"

"""LU (getrf) and the linalg kernels built on it run with BLAS on one thread (issue 11: one pool).

OpenBLAS's parallel getrf hands part of its jobs to its own pthreads pool (exec_blas_async, which the
threads callback does not cover) and the rest to the callback, i.e. the kernels' OpenMP team; the
jobs wait for each other, and with both pools awake on 2 cores a 128x128 inverse took 21 ms instead
of 0.7 ms (400x400 det: 35 ms against 1.9 ms on one thread; PyTorch 1.1 ms). benchmarks/bench_linalg.py
times them against PyTorch.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Iterator

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu import _threads


def _openblas_counts() -> dict[str, int]:
    from threadpoolctl import threadpool_info

    shared = {os.path.realpath(p) for p in _threads.shared}
    return {os.path.realpath(i["filepath"]): i["num_threads"] for i in threadpool_info()
            if i["internal_api"] == "openblas" and os.path.realpath(i["filepath"]) in shared}


@pytest.fixture
def two_blas_threads():
    before = fb.get_num_threads()
    fb.set_num_threads(2)
    yield
    fb.set_num_threads(before)


def _shared_counts() -> dict[str, int]:
    """Each shared OpenBLAS's count, read through flambeau's own functions (not threadpoolctl's)."""
    return {p: _threads._count_functions(p)[0]() for p in _threads.shared if _threads._count_functions(p)}


@contextlib.contextmanager
def _lu_call_in_another_thread() -> Iterator[None]:
    """Runs the block while another thread is inside one_blas_thread, as during its LU call."""
    inside, release = threading.Event(), threading.Event()

    def hold():
        with _threads.one_blas_thread():
            inside.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(30)
    try:
        yield
    finally:
        release.set()
        holder.join()


def test_one_blas_thread_lowers_every_shared_openblas_and_restores_it(two_blas_threads):
    fb.linalg.solve(fb.randn(4, 4, dtype=fb.float64), fb.randn(4, 1, dtype=fb.float64))  # scipy's too
    outside = _openblas_counts()
    assert outside and set(outside.values()) == {2}, outside
    with _threads.one_blas_thread():
        assert set(_openblas_counts().values()) == {1}
    assert _openblas_counts() == outside
    with pytest.raises(ZeroDivisionError), _threads.one_blas_thread():
        1 / 0  # noqa: B018  (restored after an exception too)
    assert _openblas_counts() == outside


A = np.random.default_rng(0).standard_normal((6, 6)) + 6 * np.eye(6)

LU_CALLS = {
    "det": lambda a: fb.linalg.det(a),
    "slogdet": lambda a: fb.linalg.slogdet(a),
    "inv": lambda a: fb.linalg.inv(a),
    "inv_ex": lambda a: fb.linalg.inv_ex(a),
    "solve": lambda a: fb.linalg.solve(a, a[:, :2]),
    "solve batched": lambda a: fb.linalg.solve(a.expand(3, 6, 6), a[:, :2]),
    "lu_factor": lambda a: fb.linalg.lu_factor(a),
    "lu": lambda a: fb.linalg.lu(a),
    "matrix_exp": lambda a: fb.linalg.matrix_exp(a),
}


@pytest.mark.parametrize("name", sorted(LU_CALLS))
def test_lu_based_kernels_run_on_one_blas_thread(name, monkeypatch, two_blas_threads):
    seen: list[dict[str, int]] = []
    real = _threads.one_blas_thread

    @contextlib.contextmanager
    def recording():
        with real():
            seen.append(_openblas_counts())
            yield

    monkeypatch.setattr(_threads, "one_blas_thread", recording)
    LU_CALLS[name](fb.tensor(A))
    assert seen, f"linalg.{name} ran getrf without one_blas_thread"
    assert all(set(counts.values()) <= {1} for counts in seen), seen


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_while_another_thread_holds_the_lu_lock_leaves_the_child_usable(two_blas_threads):
    with _lu_call_in_another_thread():
        pid = os.fork()
        if pid == 0:  # the child: an LU call must not wait for the parent's thread (SIGALRM ends it if so)
            code = 1
            try:
                signal.alarm(20)
                fb.linalg.det(fb.eye(3, dtype=fb.float64))
                code = 0 if set(_openblas_counts().values()) == {2} else 4  # the counts restored too
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_set_num_threads_from_another_thread_reaches_openblas(two_blas_threads):
    # threadpoolctl ignores every Python thread but the first that set an OpenBLAS count
    fb.set_num_threads(2)  # the main thread sets it first
    for n in (1, 3):
        setter = threading.Thread(target=fb.set_num_threads, args=(n,))
        setter.start()
        setter.join(30)
        counts = _shared_counts()
        assert counts and set(counts.values()) == {n}, counts
        assert fb.get_num_threads() == n


def test_set_num_threads_during_another_threads_lu_call_is_not_undone(two_blas_threads):
    with _lu_call_in_another_thread():
        setter = threading.Thread(target=fb.set_num_threads, args=(3,))
        setter.start()
        setter.join(0.5)
        assert setter.is_alive()  # it waits for the LU call to end, whose exit restores the old count
    setter.join(30)
    counts = _shared_counts()
    assert counts and set(counts.values()) == {3}, counts

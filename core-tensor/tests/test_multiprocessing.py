"""flambeau.multiprocessing: tensors through queues and pipes in shared memory, spawn, sharing strategies.

Processes are started with ``fork`` where the start method does not matter (it is fast on a loaded
2-core machine) and with ``spawn`` where it does (``spawn`` itself, the Hogwild example); every wait
is bounded.
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.multiprocessing as mp
from flambeau.multiprocessing import _segments

TIMEOUT = 60  # seconds any one wait may take on a loaded machine
STRATEGIES = ["file_descriptor", "file_system"]


def _shm_files() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith(f"flambeau_{os.getpid()}_")}


@pytest.fixture(autouse=True)
def _no_leaks():
    """Every test leaves the sharing strategy as it was and no segment of this process in /dev/shm."""
    before = _shm_files()
    yield
    mp.set_sharing_strategy("file_descriptor")
    gc.collect()
    assert _shm_files() - before == set()


@pytest.fixture(params=STRATEGIES)
def strategy(request):
    mp.set_sharing_strategy(request.param)
    return request.param


def _meta_zeros(*shape):
    try:
        return fb.zeros(*shape, device="meta")
    except Exception:  # the meta backend is optional
        pytest.skip("flambeau-backend-meta is not installed")


def _needs_autograd():
    try:
        import flambeau.autograd  # noqa: F401
    except ImportError:
        pytest.skip("flambeau-core-autograd is not installed")


def _fork():
    return mp.get_context("fork")


# -- the module's API --------------------------------------------------------------------------------
def test_reexports_the_standard_module():
    import multiprocessing

    for name in ("Process", "Queue", "SimpleQueue", "Pipe", "Pool", "Event", "Lock", "cpu_count", "get_context",
                 "get_start_method", "set_start_method", "current_process"):
        assert name in mp.__all__ and hasattr(mp, name)
    assert mp.get_context("spawn") is multiprocessing.get_context("spawn")
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException",
                 "set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"):
        assert name in mp.__all__


def test_not_imported_by_import_flambeau():
    code = "import sys, flambeau; print('flambeau.multiprocessing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, check=True)
    assert out.stdout.strip() == "False"


def test_sharing_strategies():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    with pytest.raises(AssertionError, match="unknown sharing strategy 'shm'"):
        mp.set_sharing_strategy("shm")
    assert mp.get_sharing_strategy() == "file_system"


# -- share_memory_ in one process ----------------------------------------------------------------------
def test_share_memory_moves_the_storage_and_keeps_the_values(strategy):
    t = fb.arange(12, dtype=fb.float32).reshape(3, 4)
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared()
    assert t.tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr
    t[1, 2] = -5
    assert t[1, 2].item() == -5


def test_share_memory_of_a_view_keeps_offset_strides_and_base():
    base = fb.tensor(np.arange(20).reshape(4, 5))  # a tensor of its own (not a view), so views' _base
    view = base[1:, 1:4].t()
    assert view.share_memory_() is view
    assert view.stride() == (1, 5) and view.storage_offset() == 6 and view._storage_numel() == 20
    assert view.tolist() == np.arange(20).reshape(4, 5)[1:, 1:4].T.tolist()
    assert base.is_shared()  # the view's base was rebound too: writes still alias
    view[0, 0] = 100
    assert base[1, 1].item() == 100


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                              "float64", "complex64", "complex128"]),
       shape=st.lists(st.integers(0, 4), min_size=0, max_size=3), transpose=st.booleans(), start=st.integers(0, 2))
def test_share_memory_keeps_layout_for_every_dtype(dtype, shape, transpose, start):
    t = fb.ones(shape, dtype=getattr(fb, dtype)) if dtype == "bool" else \
        fb.arange(int(np.prod(shape)), dtype=fb.float64).reshape(shape).to(getattr(fb, dtype))
    if t.ndim and t.shape[0] > start:
        t = t[start:]
    if transpose and t.ndim >= 2:
        t = t.transpose(0, 1)
    expect = (t.tolist(), t.stride(), t.storage_offset(), t.dtype, t.shape)
    t.share_memory_()
    assert (t.tolist(), t.stride(), t.storage_offset(), t.dtype, t.shape) == expect
    assert t.is_shared() == (t._storage_numel() > 0)


def test_other_devices_are_not_shared():
    # Tensor.share_memory_ is core-tensor's; is_shared on other devices is False, as PyTorch's cpu test.
    t = _meta_zeros(3)
    assert not t.is_shared()
    with pytest.raises(RuntimeError, match="only cpu tensors can be placed in shared memory, got a tensor on 'meta'"):
        t.share_memory_()


# -- tensors through queues and pipes --------------------------------------------------------------------
def _child_writes(q_in, q_out):
    t = q_in.get(timeout=TIMEOUT)
    q_out.put((t.is_shared(), t.stride(), t.storage_offset(), t.tolist(), t.requires_grad, t.grad is None))
    with fb.no_grad():
        t.mul_(10)
    q_out.put("written")
    q_in.get(timeout=TIMEOUT)  # hold the tensor until the parent has looked


def _run(target, *args, ctx=None):
    ctx = ctx or _fork()
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=target, args=(q_in, q_out) + args, daemon=True)
    p.start()
    return p, q_in, q_out


def test_a_write_in_the_receiver_is_seen_by_the_sender(strategy):
    t = fb.arange(6, dtype=fb.float32)
    p, q_in, q_out = _run(_child_writes)
    try:
        q_in.put(t)
        shared, stride, offset, values, _, _ = q_out.get(timeout=TIMEOUT)
        assert shared and stride == (1,) and offset == 0 and values == [0, 1, 2, 3, 4, 5]
        assert t.is_shared()  # sending moved the sender's storage to shared memory, as PyTorch
        assert q_out.get(timeout=TIMEOUT) == "written"
        assert t.tolist() == [0, 10, 20, 30, 40, 50]
        q_in.put(None)
    finally:
        p.join(TIMEOUT)
    assert p.exitcode == 0


def test_views_keep_offset_and_strides_across_processes(strategy):
    base = fb.tensor(np.arange(20.0).reshape(4, 5))
    view = base.t()[1:4, 1:]  # strides (1, 5), offset 6
    p, q_in, q_out = _run(_child_writes)
    try:
        q_in.put(view)
        shared, stride, offset, values, _, _ = q_out.get(timeout=TIMEOUT)
        assert shared and stride == (1, 5) and offset == 6
        assert values == np.arange(20.0).reshape(4, 5).T[1:4, 1:].tolist()
        assert q_out.get(timeout=TIMEOUT) == "written"
        assert view.tolist() == (10 * np.arange(20.0).reshape(4, 5).T[1:4, 1:]).tolist()
        assert base[0, 0].item() == 0 and base[1, 1].item() == 60  # the rest of the storage is untouched
        q_in.put(None)
    finally:
        p.join(TIMEOUT)
    assert p.exitcode == 0


def test_requires_grad_travels_gradients_do_not():
    _needs_autograd()
    t = fb.ones(3, requires_grad=True)
    t.grad = fb.full((3,), 7.0)
    p, q_in, q_out = _run(_child_writes)
    try:
        q_in.put(t)
        shared, _, _, _, requires_grad, no_grad = q_out.get(timeout=TIMEOUT)
        assert shared and requires_grad and no_grad
        assert q_out.get(timeout=TIMEOUT) == "written"
        q_in.put(None)
    finally:
        p.join(TIMEOUT)
    assert t.detach().tolist() == [10.0, 10.0, 10.0] and t.grad.tolist() == [7.0, 7.0, 7.0]


def test_non_leaf_tensors_that_require_grad_are_refused():
    from multiprocessing.reduction import ForkingPickler

    _needs_autograd()
    x = fb.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(x)
    assert not x.is_shared()


def test_device_tensors_are_refused_with_a_clear_error():
    from multiprocessing.reduction import ForkingPickler

    with pytest.raises(RuntimeError, match="sending a tensor to another process: only cpu tensors"):
        ForkingPickler.dumps(_meta_zeros(2))


def test_a_batch_travels_in_one_segment_each_storage_its_own(strategy):
    import pickle

    from flambeau.multiprocessing import reductions

    a = fb.tensor(np.arange(10.0))
    b = fb.tensor([1, 2, 3], dtype=fb.int8)
    batch = {"a": a, "parts": [b, a.as_strided((2, 2), (4, 2), 3)]}
    payload = reductions.dumps(batch)
    assert _segments.segment_of(a._data) is _segments.segment_of(b._data) is not None  # one segment
    assert (a.storage_offset(), a._storage_numel(), b._storage_numel()) == (0, 10, 3)
    back = pickle.loads(payload)  # (received in this same process: the handle is opened once)
    view = back["parts"][1]
    assert back["a"].tolist() == list(range(10)) and back["parts"][0].tolist() == [1, 2, 3]
    assert view.tolist() == [[3.0, 5.0], [7.0, 9.0]] and view.storage_offset() == 3 and view.stride() == (4, 2)
    assert back["a"]._storage_numel() == 10 and back["parts"][0].dtype == fb.int8
    view[1, 1] = -1
    assert back["a"][9].item() == -1 and a[9].item() == -1


def _echo(q_in, q_out):
    while (item := q_in.get(timeout=TIMEOUT)) is not None:
        q_out.put(item)


def test_round_trip_keeps_dtype_conj_and_empty_tensors(strategy):
    items = [fb.tensor([1 + 2j, 3 - 1j]).conj(), fb.zeros(0, 3), fb.tensor([1.5, 2.5], dtype=fb.bfloat16),
             fb.tensor(True), (fb.arange(3), {"x": fb.ones(2, 2)})]
    p, q_in, q_out = _run(_echo)
    try:
        for item in items:
            q_in.put(item)
        back = [q_out.get(timeout=TIMEOUT) for _ in items]
        q_in.put(None)
    finally:
        p.join(TIMEOUT)
    assert back[0].is_conj() and back[0].resolve_conj().tolist() == [1 - 2j, 3 + 1j]
    assert back[1].shape == (0, 3) and back[1].dtype == fb.float32
    assert back[2].dtype == fb.bfloat16 and back[2].tolist() == [1.5, 2.5]
    assert back[3].dtype == fb.bool and back[3].item() is True
    assert back[4][0].tolist() == [0, 1, 2] and back[4][1]["x"].tolist() == [[1, 1], [1, 1]]
    # The echo maps what the parent shared, and what comes back maps the same memory again.
    items[4][0][0] = 42
    assert back[4][0][0].item() == 42


def _pipe_child(conn):
    t = conn.recv()
    t.add_(1)
    conn.send(t[1:])
    conn.recv()


def test_pipes_share_too(strategy):
    ctx = _fork()
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_pipe_child, args=(child,), daemon=True)
    p.start()
    try:
        t = fb.zeros(4, dtype=fb.int32)
        parent.send(t)
        assert parent.poll(TIMEOUT)
        tail = parent.recv()
        assert t.tolist() == [1, 1, 1, 1] and tail.storage_offset() == 1
        tail[0] = 9
        assert t.tolist() == [1, 9, 1, 1]
        parent.send(None)
    finally:
        p.join(TIMEOUT)
    assert p.exitcode == 0


def test_file_system_segments_are_unlinked_when_the_last_holder_drops_them():
    mp.set_sharing_strategy("file_system")
    t = fb.ones(1000).share_memory_()
    (name,) = _shm_files()
    p, q_in, q_out = _run(_child_writes)
    try:
        q_in.put(t)
        assert q_out.get(timeout=TIMEOUT)[0]
        assert q_out.get(timeout=TIMEOUT) == "written"
        del t
        gc.collect()
        assert name in _shm_files()  # the child still holds it
        q_in.put(None)
    finally:
        p.join(TIMEOUT)
    assert p.exitcode == 0
    assert name not in _shm_files()


def _make_and_send(conn):
    conn.send(fb.arange(4.0))  # a segment created in the child, which then exits
    conn.recv()


def test_file_system_segments_outlive_the_child_that_made_them():
    # The child shares the parent's resource tracker: had it started its own, that tracker would
    # unlink the segment when the child exits, while the parent still uses it. (A pipe, not a
    # queue: a queue's semaphores would start the tracker in the parent anyway.)
    import time

    mp.set_sharing_strategy("file_system")
    ctx = _fork()
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_make_and_send, args=(child,), daemon=True)
    p.start()
    assert parent.poll(TIMEOUT)
    t = parent.recv()
    parent.send(None)
    p.join(TIMEOUT)
    assert p.exitcode == 0
    name = _segments.segment_of(t._data).name
    time.sleep(2.0)  # what a tracker of the child's own would do, it does as soon as the child is gone
    assert os.path.exists(f"/dev/shm/{name}") and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert not os.path.exists(f"/dev/shm/{name}")


def test_file_descriptor_segments_close_their_descriptor():
    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    gc.collect()
    before = fds()
    t = fb.ones(10).share_memory_()
    view = t[2:]
    held = fds() - before
    assert held in (1, 2)  # the memfd, and mmap's own copy of it
    del t
    gc.collect()
    assert fds() == before + held  # the view keeps the segment alive
    del view
    gc.collect()
    assert fds() == before


# -- spawn -----------------------------------------------------------------------------------------
def _write_rank(i, t):
    t[i] = i + 1


def _fail(i, code):
    if i == 1:
        if code is None:
            raise ValueError("rank one failed")
        sys.exit(code)


def test_start_processes_reports_the_first_failure():
    with pytest.raises(mp.ProcessRaisedException, match="rank one failed") as info:
        mp.start_processes(_fail, args=(None,), nprocs=2, start_method="fork")
    assert info.value.error_index == 1 and "-- Process 1 terminated with the following error:" in str(info.value)
    assert "Traceback" in str(info.value)
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with exit code 3") as exited:
        mp.start_processes(_fail, args=(3,), nprocs=2, start_method="fork")
    assert exited.value.exit_code == 3 and exited.value.error_index == 1


def _killed_while_other_hangs(i):
    import signal
    import time

    if i == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(600)  # rank 0 would hang: the failure of rank 1 must stop it


def test_a_killed_process_stops_the_others():
    import time

    start = time.monotonic()
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with signal SIGKILL") as info:
        mp.start_processes(_killed_while_other_hangs, nprocs=2, start_method="fork")
    assert info.value.signal_name == "SIGKILL" and info.value.exit_code == -9 and info.value.error_index == 1
    assert time.monotonic() - start < TIMEOUT


def test_start_processes_without_join_returns_the_context():
    t = fb.zeros(3).share_memory_()
    context = mp.start_processes(_write_rank, args=(t,), nprocs=3, join=False, start_method="fork")
    assert isinstance(context, mp.ProcessContext) and len(context.pids()) == 3
    while not context.join(TIMEOUT):
        pass
    assert context.join() is True
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_spawn_argument_errors(monkeypatch):
    with pytest.raises(ValueError, match="nprocs must be a positive integer, got 0"):
        mp.spawn(_write_rank, nprocs=0)
    with pytest.raises(TypeError, match="args must be a tuple, got list"):
        mp.start_processes(_write_rank, args=[1], start_method="fork")
    calls = []
    monkeypatch.setattr(sys.modules["flambeau.multiprocessing.spawn"], "start_processes",
                        lambda *args, **kw: calls.append((args, kw)))
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_fail, args=(None,), nprocs=2, start_method="fork")
    assert calls == [((_fail, (None,), 2, True, False), {"start_method": "spawn"})]  # spawn all the same


# -- Hogwild ----------------------------------------------------------------------------------------
def _hogwild(rank, w, x, y, steps, lr):
    # Least squares by gradient descent, each process on its half of the rows, both on the same w.
    rows = slice(rank * 32, (rank + 1) * 32)
    xs, ys = x[rows], y[rows]
    for _ in range(steps):
        grad = xs.t() @ (xs @ w - ys) / xs.shape[0]
        w.sub_(lr * grad)


def test_hogwild_two_processes_train_one_shared_tensor():
    rng = np.random.default_rng(0)
    true_w = np.array([[1.5], [-2.0], [0.5]], dtype=np.float32)
    x_np = rng.standard_normal((64, 3)).astype(np.float32)
    x, y = fb.from_numpy(x_np), fb.from_numpy(x_np @ true_w)
    w = fb.zeros(3, 1).share_memory_()
    assert mp.spawn(_hogwild, args=(w, x, y, 200, 0.1), nprocs=2) is None  # spawn: slow, so the only one
    np.testing.assert_allclose(w.numpy(), true_w, atol=1e-3)

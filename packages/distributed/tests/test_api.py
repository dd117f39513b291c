"""In-process checks: errors before init, backends, init_method parsing, stores, ReduceOp/Backend, the
launcher's argument handling, and the nccl backend (skipped without a GPU)."""
from __future__ import annotations

import sys
import threading
from datetime import timedelta

import numpy as np
import pytest

import flambeau as fb
import flambeau.distributed as dist
from flambeau.distributed import _c10d, _mpi


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(fb.ones(2)),
    lambda: dist.broadcast(fb.ones(2), src=0),
    lambda: dist.barrier(),
    lambda: dist.get_rank(),
    lambda: dist.get_world_size(),
    lambda: dist.send(fb.ones(2), dst=1),
    lambda: dist.all_gather_object([None], 1),
    lambda: dist.new_group([0]),
    lambda: dist.DistributedDataParallel(fb.nn.Linear(2, 2)) if hasattr(fb, "nn") else dist.get_rank(),
])
def test_a_collective_before_init_process_group_raises(call):
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        call()


def test_group_world_is_none_before_init():
    assert dist.group.WORLD is None
    assert dist.is_available()


@pytest.mark.parametrize("name", ["foo", "MPII", ""])
def test_unknown_backend(name):
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group(name)
    assert not dist.is_initialized()


def test_gloo_names_the_backends_flambeau_has():
    with pytest.raises(ValueError, match="no gloo backend.*'mpi'"):
        dist.init_process_group("gloo")


def test_backend_names():
    assert dist.Backend("MPI") == dist.Backend.MPI == "mpi"
    assert dist.Backend("nccl") == "nccl"
    with pytest.raises(ValueError):
        dist.Backend(3)


def test_mpi4py_missing_names_what_to_install(monkeypatch):
    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py raises ImportError
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mpi4py" else real(name, *a))
    assert not dist.is_mpi_available()
    with pytest.raises(RuntimeError, match=r"pip install mpi4py mpich"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_no_backend_at_all_names_what_to_install(monkeypatch):
    monkeypatch.setattr(_c10d, "is_mpi_available", lambda: False)
    monkeypatch.setattr(_c10d, "is_nccl_available", lambda: False)
    with pytest.raises(RuntimeError, match="pip install mpi4py mpich"):
        dist.init_process_group()


@pytest.mark.parametrize("kwargs, err, match", [
    ({"init_method": "env://", "store": dist.HashStore()}, ValueError, "Cannot specify both init_method and store"),
    ({"timeout": 5}, TypeError, "timedelta"),
    ({"init_method": "udp://x:1"}, ValueError, "unknown scheme 'udp'"),
    ({"init_method": "tcp://hostonly"}, ValueError, "needs a host and a port"),
])
def test_init_process_group_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        dist.init_process_group("mpi", **kwargs)
    assert not dist.is_initialized()


def test_init_method_parsing():
    assert _c10d._parse_init_method(None) == ("env", {})
    assert _c10d._parse_init_method("tcp://10.1.1.20:23456") == ("tcp", {"host": "10.1.1.20", "port": 23456})
    assert _c10d._parse_init_method("file:///tmp/rdzv?world_size=2&rank=1") == (
        "file", {"path": "/tmp/rdzv", "world_size": "2", "rank": "1"})


def test_reduce_op_and_checks():
    assert dist.ReduceOp.SUM is dist.reduce_op.SUM
    with pytest.raises(ValueError, match="BAND takes integer or bool"):
        _mpi.check_op(dist.ReduceOp.BAND, np.dtype(np.float32), "all_reduce")
    with pytest.raises(ValueError, match="not defined for complex"):
        _mpi.check_op(dist.ReduceOp.MIN, np.dtype(np.complex64), "all_reduce")
    with pytest.raises(TypeError, match="ReduceOp"):
        _mpi.check_op("sum", np.dtype(np.float32), "all_reduce")


def test_avg_truncates_integers_toward_zero():
    a = np.array([-7, -6, 6, 7], np.int32)
    _mpi.finish_avg(a, 2)
    assert a.tolist() == [-3, -3, 3, 3]
    f = np.array([1.0, 3.0], np.float32)
    _mpi.finish_avg(f, 2)
    assert f.tolist() == [0.5, 1.5]


# -- stores ----------------------------------------------------------------------------------------
def _exercise(store: dist.Store) -> None:
    store.set("a", "1")
    assert store.get("a") == b"1"
    assert store.add("n", 2) == 2 and store.add("n", 3) == 5
    assert store.check(["a", "n"]) and not store.check(["a", "missing"])
    assert store.delete_key("a") and not store.check(["a"])
    with pytest.raises(dist.DistStoreError, match="Timed out"):
        store.wait(["never"], timedelta(milliseconds=50))


def test_hash_store():
    _exercise(dist.HashStore())


def test_prefix_store():
    base = dist.HashStore()
    p = dist.PrefixStore("job", base)
    _exercise(p)
    p.set("k", b"v")
    assert base.get("job/k") == b"v"


def test_file_store(tmp_path):
    _exercise(dist.FileStore(str(tmp_path / "store")))
    a, b = dist.FileStore(str(tmp_path / "shared"), 2), dist.FileStore(str(tmp_path / "shared"), 2)
    a.set("x", b"\x00\x01")
    assert b.get("x") == b"\x00\x01"


def test_tcp_store_between_threads():
    master = dist.TCPStore("127.0.0.1", 0, 2, is_master=True, timeout=timedelta(seconds=10))
    _exercise(master)
    client = dist.TCPStore("127.0.0.1", master.port, 2, timeout=timedelta(seconds=10))
    got = []
    t = threading.Thread(target=lambda: got.append(client.get("late")))
    t.start()
    master.set("late", b"value")
    t.join(10)
    assert got == [b"value"]


def test_tcp_store_unreachable():
    with pytest.raises(dist.DistNetworkError, match="could not reach"):
        dist.TCPStore("127.0.0.1", 1, timeout=timedelta(milliseconds=200))


# -- Work ----------------------------------------------------------------------------------------------
def test_work_times_out_with_a_clear_error():
    w = dist.Work([object()], test=lambda r: False, timeout=timedelta(milliseconds=100), what="all_reduce (rank 0)")
    with pytest.raises(dist.DistBackendError, match=r"all_reduce \(rank 0\) timed out after 0.1 s"):
        w.wait()
    assert not w.is_success() and isinstance(w.exception(), dist.DistBackendError)


def test_work_runs_its_completion_once():
    calls = []
    w = dist.Work([1], test=lambda r: True, on_complete=lambda: calls.append(1), timeout=timedelta(seconds=1),
                  what="x", result=["r"])
    assert w.is_completed() and w.wait() and w.result() == ["r"] and calls == [1]
    assert w.get_future().value() == ["r"]


# -- launcher ------------------------------------------------------------------------------------------
def test_launcher_refuses_several_nodes(capsys):
    from flambeau.distributed.run import main

    assert main(["--nnodes", "2", "x.py"]) == 2
    assert "mpiexec -n N -hosts" in capsys.readouterr().err


def test_launcher_argument_errors():
    from flambeau.distributed.run import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--nproc-per-node", "0", "x.py"])
    opts = build_parser().parse_args(["--nproc_per_node", "3", "train.py", "--lr", "0.1"])
    assert opts.nproc_per_node == 3 and opts.target == "train.py" and opts.args == ["--lr", "0.1"]


# -- nccl ----------------------------------------------------------------------------------------------
def test_nccl_backend():
    if not dist.is_nccl_available():
        pytest.skip("the nccl backend needs CuPy with NCCL and a GPU (none here): ProcessGroupNCCL is untested")
    from flambeau.distributed._process_group_nccl import ProcessGroupNCCL  # pragma: no cover

    assert ProcessGroupNCCL.backend_name == "nccl"  # pragma: no cover

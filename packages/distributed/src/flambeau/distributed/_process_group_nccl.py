"""``ProcessGroupNCCL``: collectives on cuda tensors through CuPy's NCCL bindings (``cupy.cuda.nccl``).

UNTESTED: written against CuPy's documented API, but no GPU was lent to the session that wrote it,
and its tests skip without one. It covers the calls DDP needs (all_reduce, broadcast, all_gather into
a tensor, reduce_scatter_tensor, send/recv, barrier); the rest raise a clear error. Device pointers go
straight to NCCL (no copies for contiguous tensors); NCCL runs on CuPy's current stream, and a Work
waits for that stream.
"""
from __future__ import annotations

import pickle
from datetime import timedelta
from typing import Any

from ._types import ReduceOp
from ._work import Work


def is_available() -> bool:
    try:
        from cupy.cuda import nccl  # noqa: F401
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0 and nccl.available
    except Exception:  # no CuPy, no NCCL, no GPU: not available
        return False


def _nccl() -> Any:
    try:
        from cupy.cuda import nccl
    except ImportError as e:
        raise RuntimeError("the 'nccl' backend needs CuPy with NCCL (pip install cupy-cuda12x) and a GPU") from e
    return nccl


def _dtype(nccl: Any, name: str) -> Any:
    table = {"int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8, "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64,
             "float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
             "bool": nccl.NCCL_UINT8}
    if name == "bfloat16" and hasattr(nccl, "NCCL_BFLOAT16"):
        return nccl.NCCL_BFLOAT16
    if name not in table:
        raise ValueError(f"the 'nccl' backend cannot reduce flambeau.{name} tensors")
    return table[name]


def _op(nccl: Any, op: ReduceOp) -> Any:
    table = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD, ReduceOp.MIN: nccl.NCCL_MIN,
             ReduceOp.MAX: nccl.NCCL_MAX}
    if op is ReduceOp.AVG and hasattr(nccl, "NCCL_AVG"):
        return nccl.NCCL_AVG
    if op not in table:
        raise ValueError(f"the 'nccl' backend has no ReduceOp.{op.name} here")
    return table[op]


class ProcessGroupNCCL:
    """One NCCL communicator over ``size`` ranks, one GPU per rank (the current CuPy device)."""

    backend_name = "nccl"

    def __init__(self, comm: Any, rank: int, size: int, timeout: timedelta, unique_id: Any = None) -> None:
        self.comm, self._rank, self._size, self.timeout = comm, rank, size, timeout

    @classmethod
    def from_store(cls, store: Any, rank: int, size: int, timeout: timedelta) -> "ProcessGroupNCCL":
        """Rank 0 makes the unique id and shares it through ``store``; every rank joins."""
        nccl = _nccl()
        if rank == 0:
            uid = nccl.get_unique_id()
            store.set("nccl/unique_id", pickle.dumps(uid))
        else:
            uid = pickle.loads(store.get("nccl/unique_id"))
        return cls(nccl.NcclCommunicator(size, uid, rank), rank, size, timeout)

    @classmethod
    def from_mpi(cls, mpi_group: Any, timeout: timedelta) -> "ProcessGroupNCCL":
        """The unique id broadcast over an MPI group's communicator."""
        nccl = _nccl()
        uid = nccl.get_unique_id() if mpi_group.rank() == 0 else None
        uid = mpi_group.comm.bcast(uid, root=0)
        return cls(nccl.NcclCommunicator(mpi_group.size(), uid, mpi_group.rank()), mpi_group.rank(),
                   mpi_group.size(), timeout)

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def subgroup(self, members: list[int], timeout: timedelta) -> "ProcessGroupNCCL | None":
        raise NotImplementedError("new_group with the 'nccl' backend is not implemented yet")

    def destroy(self) -> None:
        self.comm.destroy()

    def _launch(self, what: str, result: list) -> Work:
        import cupy

        event = cupy.cuda.Event(disable_timing=True)
        event.record()
        return Work([event], test=lambda evs: all(e.done for e in evs), timeout=self.timeout,
                    what=f"{what} (nccl rank {self._rank})", result=result)

    @staticmethod
    def _array(t: Any, what: str) -> Any:
        if t.device.type != "cuda":
            raise ValueError(f"{what}: the 'nccl' backend takes cuda tensors, got one on {t.device}")
        a = t._data
        if not a.flags.c_contiguous:
            raise ValueError(f"{what}: the 'nccl' backend takes contiguous tensors (call .contiguous())")
        return a

    def all_reduce(self, t: Any, op: ReduceOp, check: bool = True) -> Work:
        import cupy

        nccl, a = _nccl(), self._array(t, "all_reduce")
        self.comm.allReduce(a.data.ptr, a.data.ptr, a.size, _dtype(nccl, a.dtype.name), _op(nccl, op),
                            cupy.cuda.get_current_stream().ptr)
        return self._launch("all_reduce", [t])

    def broadcast(self, t: Any, root: int) -> Work:
        import cupy

        nccl, a = _nccl(), self._array(t, "broadcast")
        self.comm.broadcast(a.data.ptr, a.data.ptr, a.nbytes, nccl.NCCL_UINT8, root,
                            cupy.cuda.get_current_stream().ptr)
        return self._launch("broadcast", [t])

    def send(self, t: Any, dst: int, tag: int) -> Work:
        import cupy

        nccl, a = _nccl(), self._array(t, "send")
        self.comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, dst, cupy.cuda.get_current_stream().ptr)
        return self._launch("send", [t])

    def recv(self, t: Any, src: int | None, tag: int) -> Work:
        import cupy

        if src is None:
            raise ValueError("recv: the 'nccl' backend needs a source rank")
        nccl, a = _nccl(), self._array(t, "recv")
        self.comm.recv(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, src, cupy.cuda.get_current_stream().ptr)
        return self._launch("recv", [t])

    def barrier(self) -> Work:
        import cupy

        one = cupy.ones(1, cupy.float32)
        nccl = _nccl()
        self.comm.allReduce(one.data.ptr, one.data.ptr, 1, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                            cupy.cuda.get_current_stream().ptr)
        return self._launch("barrier", [])

    def __getattr__(self, name: str) -> Any:
        if name.endswith("_array") or name in ("reduce",):
            def refuse(*args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError(f"{name.removesuffix('_array')} is not implemented for the 'nccl' backend "
                                          "yet (all_reduce, broadcast, send/recv and barrier are)")
            return refuse
        raise AttributeError(name)

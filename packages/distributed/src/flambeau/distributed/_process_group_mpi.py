"""``ProcessGroupMPI``: the collectives of one MPI communicator on CPU tensors.

Every method checks its arguments, checks where it can that every rank passed matching sizes (one
tiny all-gather of the shapes, which names the ranks that differ instead of letting MPI hang or
truncate), starts the nonblocking MPI operation on the tensors' own memory, and returns a Work.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Sequence

import numpy as np

from flambeau import Tensor

from . import _mpi
from ._buffers import _NOOP, bump, readable, store_into, writable
from ._types import DistBackendError, ReduceOp
from ._work import Work

# dtypes as small integers for the size checks
_DTYPE_CODES = {name: i for i, name in enumerate(
    ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
     "complex64", "complex128"))}


def _code(a: np.ndarray) -> int:
    return _DTYPE_CODES.get(a.dtype.name, 99)


class ProcessGroupMPI:
    """A group of ranks communicating through one MPI communicator."""

    backend_name = "mpi"

    def __init__(self, comm: Any, ranks: Sequence[int], timeout: timedelta, check_sizes: bool = True) -> None:
        self.comm = comm
        self.ranks = list(ranks)  # global rank of each group rank
        self.timeout = timeout
        self.check_sizes = check_sizes
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()

    # -- identity --------------------------------------------------------------------------
    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return "mpi"

    def _work(self, requests: list, what: str, on_complete: Callable[[], None] | None = None,
              result: list | None = None) -> Work:
        return Work(requests, test=_mpi.test_all, on_complete=on_complete, timeout=self.timeout,
                    what=f"{what} (rank {self._rank} of a group of {self._size})", result=result,
                    on_timeout=_mpi.mark_broken)

    def _blocking(self, requests: list, what: str) -> None:
        self._work(requests, what).wait()

    # -- agreement checks -----------------------------------------------------------------
    def agree(self, what: str, values: Sequence[int], describe: Callable[[Sequence[int]], str]) -> None:
        """Check that every rank passed the same ``values`` (sizes, dtype codes, roots); raise a
        ValueError naming the ranks that differ from rank 0 (raised on every rank alike)."""
        if not self.check_sizes or self._size == 1:
            return
        mine = np.asarray(values, dtype=np.int64)
        table = np.empty((self._size, mine.size), dtype=np.int64)
        MPI = _mpi._MPI
        self._blocking([self.comm.Iallgather([mine, MPI.INT64_T], [table, MPI.INT64_T])], f"{what} (size check)")
        if (table == table[0]).all():
            return
        lines = [f"rank {self.ranks[r]}: {describe(table[r])}" for r in range(self._size)
                 if r == 0 or not (table[r] == table[0]).all()]
        raise ValueError(f"{what}: the ranks passed tensors that do not match ({'; '.join(lines)})")

    def _agree_array(self, what: str, a: np.ndarray, extra: Sequence[int] = ()) -> None:
        self.agree(what, [a.nbytes, _code(a), *extra],
                   lambda v: f"{v[0]} bytes of {_dtype_from_code(v[1])}"
                   + (f", root {v[2]}" if len(v) > 2 else ""))

    # -- point to point ---------------------------------------------------------------------
    def send(self, t: Tensor, dst: int, tag: int) -> Work:
        a = readable(t, "send")
        req = self.comm.Isend(_mpi.raw(a), dest=dst, tag=tag)
        return self._work([req], f"send to rank {self.ranks[dst]}", result=[t])

    def recv(self, t: Tensor, src: int | None, tag: int) -> Work:
        a, back = writable(t, "recv")
        MPI = _mpi._MPI
        status = MPI.Status()
        source = MPI.ANY_SOURCE if src is None else src
        req = self.comm.Irecv(_mpi.raw(a), source=source, tag=MPI.ANY_TAG if tag is None else tag)
        expected = a.nbytes

        def test(reqs: list) -> bool:
            return reqs[0].Test(status)

        def done() -> None:
            got = status.Get_count(MPI.BYTE)
            if got != expected:
                raise DistBackendError(f"recv: rank {self.ranks[self._rank]} expected {expected} bytes from rank "
                                       f"{self.ranks[status.Get_source()]} but the message had {got}")
            back()

        work = Work([req], test=test, on_complete=done, timeout=self.timeout, what=f"recv on rank {self._rank}",
                    result=[t], on_timeout=_mpi.mark_broken)
        work.source = lambda: self.ranks[status.Get_source()]  # type: ignore[attr-defined]
        return work

    # -- collectives --------------------------------------------------------------------------
    def barrier(self) -> Work:
        return self._work([self.comm.Ibarrier()], "barrier")

    def broadcast(self, t: Tensor, root: int) -> Work:
        a, back = writable(t, "broadcast")
        self._agree_array("broadcast", a, (root,))
        if self._rank == root:
            back = _NOOP
        return self._work([self.comm.Ibcast(_mpi.raw(a), root=root)], "broadcast", back, [t])

    def _reduce_buffers(self, a: np.ndarray, op: ReduceOp, what: str) -> tuple[np.ndarray, Callable[[], None]]:
        """The buffer MPI reduces (``a`` itself, or a float32 copy for halves) and what finishes it."""
        _mpi.check_op(op, a.dtype, what)
        wide = _mpi.reduce_dtype(a.dtype)
        work = a if wide is None else a.astype(wide)
        n = self._size

        def finish() -> None:
            if op is ReduceOp.AVG:
                _mpi.finish_avg(work, n)
            if wide is not None:
                a[...] = work.astype(a.dtype)

        return work, finish

    def all_reduce(self, t: Tensor, op: ReduceOp, check: bool = True) -> Work:
        a, back = writable(t, "all_reduce")
        if check:
            self._agree_array("all_reduce", a)
        buf, finish = self._reduce_buffers(a, op, "all_reduce")
        req = self.comm.Iallreduce(_mpi._MPI.IN_PLACE, _mpi.typed(buf), _mpi.mpi_op(op, a.dtype))
        return self._work([req], "all_reduce", lambda: (finish(), back()), [t])

    def all_reduce_array(self, a: np.ndarray, op: ReduceOp) -> Work:
        """all_reduce of a contiguous array the caller owns (DDP's buckets): no checks, no tensor."""
        buf, finish = self._reduce_buffers(a, op, "all_reduce")
        req = self.comm.Iallreduce(_mpi._MPI.IN_PLACE, _mpi.typed(buf), _mpi.mpi_op(op, a.dtype))
        return self._work([req], "all_reduce (DDP bucket)", finish)

    def reduce(self, t: Tensor, root: int, op: ReduceOp) -> Work:
        a, back = writable(t, "reduce")
        self._agree_array("reduce", a, (root,))
        buf, finish = self._reduce_buffers(a, op, "reduce")
        mop = _mpi.mpi_op(op, a.dtype)
        if self._rank == root:
            req = self.comm.Ireduce(_mpi._MPI.IN_PLACE, _mpi.typed(buf), op=mop, root=root)
            return self._work([req], "reduce", lambda: (finish(), back()), [t])
        # Non-roots keep their input unchanged (MPI would leave it alone; PyTorch's gloo does too).
        req = self.comm.Ireduce(_mpi.typed(buf), None, op=mop, root=root)
        return self._work([req], "reduce", None, [t])

    def all_gather_array(self, out: np.ndarray, a: np.ndarray, what: str) -> Work:
        """Gather every rank's ``a`` (same size everywhere) into ``out``, rank after rank."""
        self._agree_array(what, a)
        if out.nbytes != a.nbytes * self._size:
            raise ValueError(f"{what}: the output holds {out.nbytes} bytes but {self._size} ranks send "
                             f"{a.nbytes} each")
        return self._work([self.comm.Iallgather(_mpi.raw(a), _mpi.raw(out))], what)

    def gather_array(self, out: np.ndarray | None, a: np.ndarray, root: int, what: str) -> Work:
        self._agree_array(what, a, (root,))
        recv = _mpi.raw(out) if self._rank == root else None
        return self._work([self.comm.Igather(_mpi.raw(a), recv, root=root)], what)

    def scatter_array(self, out: np.ndarray, chunks: np.ndarray | None, root: int, what: str) -> Work:
        self._agree_array(what, out, (root,))
        send = _mpi.raw(chunks) if self._rank == root else None
        return self._work([self.comm.Iscatter(send, _mpi.raw(out), root=root)], what)

    def reduce_scatter_array(self, out: np.ndarray, stacked: np.ndarray, op: ReduceOp, what: str,
                             counts: Sequence[int] | None = None) -> Work:
        """Reduce ``stacked`` (every rank's chunks, concatenated) across ranks; this rank keeps its chunk."""
        self._agree_array(what, stacked, (out.size,) if counts is None else ())
        _mpi.check_op(op, out.dtype, what)
        wide = _mpi.reduce_dtype(out.dtype)
        send = stacked if wide is None else stacked.astype(wide)
        recv = out if wide is None else np.empty(out.shape, wide)
        mop = _mpi.mpi_op(op, out.dtype)
        if counts is None:
            req = self.comm.Ireduce_scatter_block(_mpi.typed(send), _mpi.typed(recv), op=mop)
        else:
            req = self.comm.Ireduce_scatter(_mpi.typed(send), _mpi.typed(recv), list(counts), op=mop)
        n = self._size

        def finish() -> None:
            if op is ReduceOp.AVG:
                _mpi.finish_avg(recv, n)
            if wide is not None:
                out[...] = recv.astype(out.dtype)

        return self._work([req], what, finish)

    def all_to_all_array(self, out: np.ndarray, send: np.ndarray, send_bytes: Sequence[int],
                         recv_bytes: Sequence[int], what: str) -> Work:
        """Exchange byte chunks: this rank sends ``send_bytes[r]`` to rank r and receives ``recv_bytes[r]``."""
        sdispl = np.concatenate([[0], np.cumsum(send_bytes)[:-1]]).astype(np.int64).tolist()
        rdispl = np.concatenate([[0], np.cumsum(recv_bytes)[:-1]]).astype(np.int64).tolist()
        # Each rank's send count must be what its peer expects: gather the matrix and compare.
        self._agree_counts(what, list(send_bytes), list(recv_bytes))
        MPI = _mpi._MPI
        req = self.comm.Ialltoallv([send.reshape(-1).view(np.uint8), (list(send_bytes), sdispl), MPI.BYTE],
                                   [out.reshape(-1).view(np.uint8), (list(recv_bytes), rdispl), MPI.BYTE])
        return self._work([req], what)

    def _agree_counts(self, what: str, send_bytes: list[int], recv_bytes: list[int]) -> None:
        if not self.check_sizes or self._size == 1:
            return
        mine = np.asarray(send_bytes + recv_bytes, dtype=np.int64)
        table = np.empty((self._size, mine.size), dtype=np.int64)
        MPI = _mpi._MPI
        self._blocking([self.comm.Iallgather([mine, MPI.INT64_T], [table, MPI.INT64_T])], f"{what} (size check)")
        n = self._size
        bad = [(s, r, table[s, r], table[r, n + s]) for s in range(n) for r in range(n)
               if table[s, r] != table[r, n + s]]
        if bad:
            s, r, sent, expected = bad[0]
            raise ValueError(f"{what}: rank {self.ranks[s]} sends {sent} bytes to rank {self.ranks[r]}, which expects "
                             f"{expected} ({len(bad)} mismatched pair(s))")


def _dtype_from_code(code: int) -> str:
    for name, c in _DTYPE_CODES.items():
        if c == code:
            return f"flambeau.{name}"
    return "an unknown dtype"


__all__ = ["ProcessGroupMPI", "bump", "store_into"]

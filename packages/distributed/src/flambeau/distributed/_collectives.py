"""The collectives and point-to-point calls on flambeau tensors (``torch.distributed``'s functions).

Each checks its arguments on this rank (types, devices, shapes, roots) before anything is sent, picks
the group's engine for the tensors' device, and returns a Work when ``async_op=True`` (else waits and
returns None). Ranks (``src``/``dst``) are global, as in PyTorch; ``group_src``/``group_dst`` are
ranks within ``group``.
"""
from __future__ import annotations

import pickle
from typing import Any, Sequence

import numpy as np

from flambeau import Tensor

from ._buffers import check_tensor, check_tensor_list, host, readable, store_into, writable
from ._c10d import ProcessGroup, _resolve
from ._types import ReduceOp
from ._work import Work, completed_work


def _finish(work: Work | None, async_op: bool) -> Work | None:
    if async_op:
        return work
    if work is not None:
        work.wait()
    return None


def _root(pg: ProcessGroup, what: str, global_rank: int | None, group_rank: int | None, arg: str) -> int:
    """The group rank of a collective's root from ``src``/``dst`` (global) or ``group_src``/``group_dst``."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"{what}: pass {arg} or group_{arg}, not both")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{what}: group_{arg} {group_rank} is out of range for a group of size {pg.size()}")
        return group_rank
    return pg.group_rank(0 if global_rank is None else global_rank, what, arg)


def _same_shapes(what: str, ref: Tensor, ts: Sequence[Tensor], name: str) -> None:
    for i, t in enumerate(ts):
        if t.dtype != ref.dtype:
            raise TypeError(f"{what}: {name}[{i}] has dtype {t.dtype}, the input {ref.dtype}")
        if t.shape != ref.shape:
            raise ValueError(f"{what}: {name}[{i}] has shape {tuple(t.shape)}, the input {tuple(ref.shape)}")


def _concat(ts: Sequence[Tensor], what: str) -> np.ndarray:
    return np.concatenate([readable(t, what).reshape(-1) for t in ts]) if ts else np.empty(0, np.uint8)


# -- point to point ------------------------------------------------------------------------------
def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Send ``tensor`` to rank ``dst`` without waiting; returns a Work (None outside ``group``)."""
    check_tensor(tensor, "isend")
    pg = _resolve(group, "isend")
    if pg is None:
        return None
    peer = _root(pg, "isend", dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("isend: Invalid destination rank: destination rank should not be the same as the "
                         "rank of the current process.")
    return pg.impl(tensor.device.type, "isend").send(tensor, peer, tag)


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Receive into ``tensor`` from rank ``src`` (any rank when None) without waiting; returns a Work."""
    check_tensor(tensor, "irecv")
    pg = _resolve(group, "irecv")
    if pg is None:
        return None
    peer = None if src is None and group_src is None else _root(pg, "irecv", src, group_src, "src")
    return pg.impl(tensor.device.type, "irecv").recv(tensor, peer, tag)


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it is on its way."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source() if hasattr(work, "source") else src  # type: ignore[attr-defined]


class P2POp:
    """One ``isend``/``irecv`` for ``batch_isend_irecv``."""

    def __init__(self, op: Any, tensor: Tensor, peer: int | None = None, group: ProcessGroup | None = None,
                 tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every operation of the list; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# -- collectives ---------------------------------------------------------------------------------
def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank of the group reached the barrier."""
    pg = _resolve(group, "barrier")
    if pg is None:
        return None
    return _finish(pg.any_impl().barrier(), async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank."""
    check_tensor(tensor, "broadcast")
    pg = _resolve(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, "broadcast", src, group_src, "src")
    return _finish(pg.impl(tensor.device.type, "broadcast").broadcast(tensor, root), async_op)


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across the group in place: every rank gets the result."""
    check_tensor(tensor, "all_reduce")
    pg = _resolve(group, "all_reduce")
    if pg is None:
        return None
    return _finish(pg.impl(tensor.device.type, "all_reduce").all_reduce(tensor, op), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` across the group into rank ``dst``'s ``tensor``."""
    check_tensor(tensor, "reduce")
    pg = _resolve(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, "reduce", dst, group_dst, "dst")
    return _finish(pg.impl(tensor.device.type, "reduce").reduce(tensor, root, op), async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Gather every rank's ``tensor`` into ``tensor_list`` (one tensor per rank, each the input's shape)."""
    check_tensor(tensor, "all_gather")
    outs = check_tensor_list(tensor_list, "all_gather", "tensor_list")
    pg = _resolve(group, "all_gather")
    if pg is None:
        return None
    if len(outs) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(outs)} tensors for a group of size {pg.size()}")
    _same_shapes("all_gather", tensor, outs, "tensor_list")
    impl = pg.impl(tensor.device.type, "all_gather")
    a = readable(tensor, "all_gather")
    stacked = np.empty((pg.size(), *a.shape), a.dtype)
    work = impl.all_gather_array(stacked, a, "all_gather")
    work._on_complete = lambda: [store_into(t, stacked[i]) for i, t in enumerate(outs)]
    work._result = outs
    return _finish(work, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Gather every rank's ``input_tensor`` into ``output_tensor`` (stacked or concatenated along dim 0)."""
    check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"all_gather_into_tensor: output dtype {output_tensor.dtype} differs from input dtype "
                        f"{input_tensor.dtype}")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to world_size times input "
                         f"tensor size ({output_tensor.numel()} != {pg.size()} * {input_tensor.numel()})")
    impl = pg.impl(input_tensor.device.type, "all_gather_into_tensor")
    out, back = writable(output_tensor, "all_gather_into_tensor")
    work = impl.all_gather_array(out, readable(input_tensor, "all_gather_into_tensor"), "all_gather_into_tensor")
    work._on_complete, work._result = back, [output_tensor]
    return _finish(work, async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Gather every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None on the other ranks)."""
    check_tensor(tensor, "gather")
    pg = _resolve(group, "gather")
    if pg is None:
        return None
    root = _root(pg, "gather", dst, group_dst, "dst")
    impl = pg.impl(tensor.device.type, "gather")
    a = readable(tensor, "gather")
    stacked = None
    outs: list[Tensor] = []
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("gather: Argument ``gather_list`` must be specified on destination rank.")
        outs = check_tensor_list(gather_list, "gather", "gather_list")
        if len(outs) != pg.size():
            raise ValueError(f"gather: gather_list has {len(outs)} tensors for a group of size {pg.size()}")
        _same_shapes("gather", tensor, outs, "gather_list")
        stacked = np.empty((pg.size(), *a.shape), a.dtype)
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    work = impl.gather_array(stacked, a, root, "gather")
    if stacked is not None:
        work._on_complete = lambda: [store_into(t, stacked[i]) for i, t in enumerate(outs)]
    work._result = outs
    return _finish(work, async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Send ``scatter_list[i]`` of rank ``src`` to rank i's ``tensor``."""
    check_tensor(tensor, "scatter")
    pg = _resolve(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, "scatter", src, group_src, "src")
    impl = pg.impl(tensor.device.type, "scatter")
    chunks = None
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("scatter: Argument ``scatter_list`` must be specified on source rank.")
        ins = check_tensor_list(scatter_list, "scatter", "scatter_list")
        if len(ins) != pg.size():
            raise ValueError(f"scatter: scatter_list has {len(ins)} tensors for a group of size {pg.size()}")
        _same_shapes("scatter", tensor, ins, "scatter_list")
        chunks = _concat(ins, "scatter")
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    out, back = writable(tensor, "scatter")
    work = impl.scatter_array(out, chunks, root, "scatter")
    work._on_complete, work._result = back, [tensor]
    return _finish(work, async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: ReduceOp = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` across the group into rank i's ``output``."""
    check_tensor(output, "reduce_scatter", "output")
    ins = check_tensor_list(input_list, "reduce_scatter", "input_list")
    pg = _resolve(group, "reduce_scatter")
    if pg is None:
        return None
    if len(ins) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(ins)} tensors for a group of size {pg.size()}")
    _same_shapes("reduce_scatter", output, ins, "input_list")
    impl = pg.impl(output.device.type, "reduce_scatter")
    out, back = writable(output, "reduce_scatter")
    work = impl.reduce_scatter_array(out, _concat(ins, "reduce_scatter"), op, "reduce_scatter")
    prev = work._on_complete
    work._on_complete = lambda: (prev(), back())
    work._result = [output]
    return _finish(work, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,  # noqa: A002
                          group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` (the group's chunks along dim 0, stacked or concatenated) across the group;
    rank i gets chunk i in ``output``."""
    check_tensor(output, "reduce_scatter_tensor", "output")
    check_tensor(input, "reduce_scatter_tensor", "input")
    pg = _resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise TypeError(f"reduce_scatter_tensor: output dtype {output.dtype} differs from input dtype {input.dtype}")
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as output size times world "
                         f"size ({input.numel()} != {output.numel()} * {pg.size()})")
    impl = pg.impl(output.device.type, "reduce_scatter_tensor")
    out, back = writable(output, "reduce_scatter_tensor")
    work = impl.reduce_scatter_array(out, readable(input, "reduce_scatter_tensor").reshape(-1), op,
                                     "reduce_scatter_tensor")
    prev = work._on_complete
    work._on_complete = lambda: (prev(), back())
    work._result = [output]
    return _finish(work, async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Send ``input_tensor_list[i]`` to rank i, which receives it in its ``output_tensor_list[this rank]``."""
    outs = check_tensor_list(output_tensor_list, "all_to_all", "output_tensor_list")
    ins = check_tensor_list(input_tensor_list, "all_to_all", "input_tensor_list")
    pg = _resolve(group, "all_to_all")
    if pg is None:
        return None
    n = pg.size()
    if len(outs) != n or len(ins) != n:
        raise ValueError(f"all_to_all: the tensor lists must have one tensor per rank ({n}), got "
                         f"{len(outs)} outputs and {len(ins)} inputs")
    dtypes = {t.dtype for t in outs + ins}
    if len(dtypes) != 1:
        raise TypeError(f"all_to_all: every tensor must have the same dtype, got {sorted(map(str, dtypes))}")
    impl = pg.impl(ins[0].device.type, "all_to_all")
    send = _concat(ins, "all_to_all")
    recv = np.empty(sum(t.numel() for t in outs), readable(outs[0], "all_to_all").dtype)
    item = outs[0].element_size()
    work = impl.all_to_all_array(recv, send, [t.numel() * item for t in ins], [t.numel() * item for t in outs],
                                 "all_to_all")

    def done() -> None:
        pos = 0
        for t in outs:
            store_into(t, recv[pos:pos + t.numel()])
            pos += t.numel()

    work._on_complete, work._result = done, outs
    return _finish(work, async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list[int] | None = None,  # noqa: A002
                      input_split_sizes: list[int] | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0 (evenly, or by ``input_split_sizes``), send piece i to rank i, and
    concatenate what arrives into ``output`` (split by ``output_split_sizes``)."""
    check_tensor(output, "all_to_all_single", "output")
    check_tensor(input, "all_to_all_single", "input")
    pg = _resolve(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise TypeError(f"all_to_all_single: output dtype {output.dtype} differs from input dtype {input.dtype}")
    row_in = input.numel() // max(input.shape[0], 1) if input.dim() else 1
    row_out = output.numel() // max(output.shape[0], 1) if output.dim() else 1
    in_splits = _splits("input", input, input_split_sizes, n)
    out_splits = _splits("output", output, output_split_sizes, n)
    impl = pg.impl(input.device.type, "all_to_all_single")
    out, back = writable(output, "all_to_all_single")
    item = input.element_size()
    work = impl.all_to_all_array(out, readable(input, "all_to_all_single"), [s * row_in * item for s in in_splits],
                                 [s * row_out * item for s in out_splits], "all_to_all_single")
    work._on_complete, work._result = back, [output]
    return _finish(work, async_op)


def _splits(name: str, t: Tensor, sizes: list[int] | None, n: int) -> list[int]:
    rows = t.shape[0] if t.dim() else 1
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single: the {name}'s first dimension ({rows}) must divide evenly among "
                             f"{n} ranks when no split sizes are given")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or any(s < 0 for s in sizes) or sum(sizes) != rows:
        raise ValueError(f"all_to_all_single: {name}_split_sizes {sizes} must have {n} non-negative sizes "
                         f"summing to the {name}'s first dimension ({rows})")
    return sizes


# -- Python objects (pickled; as PyTorch's, unpickling runs code from the sender: trusted peers only) --
def _bytes_tensor(blob: bytes) -> Tensor:
    import flambeau as fb

    return fb.from_numpy(np.frombuffer(blob, dtype=np.uint8).copy())


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: ProcessGroup | None = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank with rank ``src``'s (picklable objects)."""
    import flambeau as fb

    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got {type(object_list).__name__}")
    pg = _resolve(group, "broadcast_object_list")
    if pg is None:
        return
    root = _root(pg, "broadcast_object_list", src, group_src, "src")
    blob = pickle.dumps(object_list) if pg.rank() == root else b""
    size = fb.tensor([len(blob)], dtype=fb.int64)
    pg.impl("cpu", "broadcast_object_list").broadcast(size, root).wait()
    data = _bytes_tensor(blob) if pg.rank() == root else fb.empty(int(size.item()), dtype=fb.uint8)
    pg.impl("cpu", "broadcast_object_list").broadcast(data, root).wait()
    if pg.rank() != root:
        received = pickle.loads(host(data, "broadcast_object_list").tobytes())
        if len(received) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {pg._ranks[root]} sent {len(received)} objects but this "
                             f"rank's object_list has {len(object_list)} places")
        object_list[:] = received


def _gather_blobs(pg: ProcessGroup, obj: Any, root: int | None, what: str) -> list[bytes] | None:
    """Every rank's pickled ``obj``: on every rank (root None) or on ``root`` only."""
    import flambeau as fb

    impl = pg.impl("cpu", what)
    blob = pickle.dumps(obj)
    sizes = fb.empty(pg.size(), dtype=fb.int64)
    impl.all_gather_array(host(sizes, what), np.array([len(blob)], np.int64), f"{what} (sizes)").wait()
    longest = int(sizes.max().item())
    mine = np.zeros(longest, np.uint8)
    mine[:len(blob)] = np.frombuffer(blob, np.uint8)
    if root is None:
        table = np.empty((pg.size(), longest), np.uint8)
        impl.all_gather_array(table, mine, what).wait()
    else:
        table = np.empty((pg.size(), longest), np.uint8) if pg.rank() == root else None
        impl.gather_array(table, mine, root, what).wait()
        if table is None:
            return None
    lengths = host(sizes, what).tolist()
    return [table[r, :lengths[r]].tobytes() for r in range(pg.size())]


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """Put every rank's ``obj`` into ``object_list`` (one place per rank) on every rank."""
    pg = _resolve(group, "all_gather_object")
    if pg is None:
        return
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must be a list of {pg.size()} places (the group's size)")
    blobs = _gather_blobs(pg, obj, None, "all_gather_object")
    object_list[:] = [pickle.loads(b) for b in blobs or []]


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Put every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = _resolve(group, "gather_object")
    if pg is None:
        return
    root = _root(pg, "gather_object", dst, group_dst, "dst")
    if pg.rank() == root and (not isinstance(object_gather_list, list) or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list must be a list of {pg.size()} places on the "
                         "destination rank")
    blobs = _gather_blobs(pg, obj, root, "gather_object")
    if blobs is not None and object_gather_list is not None:
        object_gather_list[:] = [pickle.loads(b) for b in blobs]


def scatter_object_list(scatter_object_output_list: list[Any], scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """Put rank ``src``'s ``scatter_object_input_list[i]`` into rank i's ``scatter_object_output_list[0]``."""
    import flambeau as fb

    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    pg = _resolve(group, "scatter_object_list")
    if pg is None:
        return
    root = _root(pg, "scatter_object_list", src, group_src, "src")
    impl = pg.impl("cpu", "scatter_object_list")
    blobs: list[bytes] = []
    if pg.rank() == root:
        if not isinstance(scatter_object_input_list, list) or len(scatter_object_input_list) != pg.size():
            raise ValueError(f"scatter_object_list: scatter_object_input_list must be a list of {pg.size()} objects "
                             "on the source rank")
        blobs = [pickle.dumps(o) for o in scatter_object_input_list]
    meta = np.array([max(map(len, blobs)) if blobs else 0], np.int64)
    longest = fb.from_numpy(meta)
    impl.broadcast(longest, root).wait()
    width = int(meta[0])
    table = None
    if blobs:
        table = np.zeros((pg.size(), width + 8), np.uint8)
        for r, b in enumerate(blobs):
            table[r, :8] = np.frombuffer(np.int64(len(b)).tobytes(), np.uint8)
            table[r, 8:8 + len(b)] = np.frombuffer(b, np.uint8)
    mine = np.empty(width + 8, np.uint8)
    impl.scatter_array(mine, table, root, "scatter_object_list").wait()
    n = int(np.frombuffer(mine[:8].tobytes(), np.int64)[0])
    scatter_object_output_list[0] = pickle.loads(mine[8:8 + n].tobytes())


__all__ = ["completed_work"]

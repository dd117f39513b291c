"""``DistributedDataParallel``: data-parallel training with gradients averaged in buckets during backward.

At wrap, rank 0's parameters and buffers are broadcast to every rank. The parameters that require
grad are split into buckets of about ``bucket_cap_mb`` megabytes, in reverse order of registration
(roughly the order backward produces their gradients). A hook after each parameter's gradient
accumulation marks it ready; when a bucket's parameters are all ready, its gradients are copied into
the bucket's flat buffer and an asynchronous all-reduce starts, so that communication overlaps the
rest of backward. Buckets start in the same order on every rank (MPI needs that). When the last one
has started, the reducer waits for all of them and writes the averaged gradients back into ``.grad``.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from flambeau import Tensor
from flambeau.nn import Module

from ._c10d import _resolve
from ._types import ReduceOp

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = 1 * _MB  # as PyTorch: a small first bucket starts communication early


class _Bucket:
    __slots__ = ("params", "offsets", "flat", "pending", "work", "index")

    def __init__(self, index: int, params: list[Tensor]) -> None:
        self.index = index
        self.params = params
        self.offsets = np.cumsum([0] + [p.numel() for p in params]).tolist()
        self.flat = np.zeros(self.offsets[-1], dtype=params[0]._data.dtype)
        self.pending = len(params)
        self.work: Any = None


class _Reducer:
    """The per-iteration state of the bucketed gradient reduction."""

    def __init__(self, params: list[Tensor], pg: Any, cap_bytes: int, first_cap_bytes: int) -> None:
        self.pg = pg
        self.impl = pg.impl(params[0].device.type, "DistributedDataParallel")
        self.buckets: list[_Bucket] = []
        self.where: dict[int, tuple[_Bucket, int]] = {}
        current: list[Tensor] = []
        size, cap = 0, first_cap_bytes
        for p in reversed(params):
            if current and (size + p.nbytes > cap or p.dtype != current[0].dtype):
                self._add(current)
                current, size, cap = [], 0, cap_bytes
            current.append(p)
            size += p.nbytes
        if current:
            self._add(current)
        self.order = params
        self.find_unused = False  # set by DDP: every rank the same
        self.ready: set[int] = set()
        self.unused: set[int] = set()  # found unused by this rank's forward (find_unused_parameters)
        self.next_bucket = 0
        self.in_progress = False

    def _add(self, params: list[Tensor]) -> None:
        bucket = _Bucket(len(self.buckets), params)
        for i, p in enumerate(params):
            self.where[id(p)] = (bucket, i)
        self.buckets.append(bucket)

    def mark_ready(self, p: Tensor) -> None:
        key = id(p)
        if key in self.ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
                "1) Use of a module parameter outside the `forward` function. 2) Reused parameters in multiple "
                "reentrant backward passes. 3) Incorrect unused parameter detection (a parameter was marked unused "
                "by find_unused_parameters but received a gradient).")
        self.ready.add(key)
        self.in_progress = True
        bucket, _ = self.where[key]
        bucket.pending -= 1
        # Start every bucket that is complete, in bucket order, then give MPI a chance to progress.
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1
        for b in self.buckets[:self.next_bucket]:
            if b.work is not None:
                b.work.is_completed()
        if self.next_bucket == len(self.buckets):
            self._finalize()

    def _launch(self, bucket: _Bucket) -> None:
        flat, off = bucket.flat, bucket.offsets
        for i, p in enumerate(bucket.params):
            g = p.grad
            if g is None:  # unused on this rank: contributes zeros
                flat[off[i]:off[i + 1]] = 0
            else:
                flat[off[i]:off[i + 1]] = g._data.reshape(-1)
        bucket.work = self.impl.all_reduce_array(flat, ReduceOp.AVG)

    def _finalize(self) -> None:
        import flambeau as fb

        globally_used = None
        if self.find_unused:
            # Which parameters some rank used: those keep (or get) the averaged gradient; a parameter no
            # rank used keeps no gradient, as PyTorch's.
            flags = np.zeros(len(self.order), np.int32)
            for i, p in enumerate(self.order):
                if id(p) not in self.unused:
                    flags[i] = 1
            self.impl.all_reduce_array(flags, ReduceOp.MAX).wait()
            globally_used = {id(p) for i, p in enumerate(self.order) if flags[i]}
        for bucket in self.buckets:
            bucket.work.wait()
            flat, off = bucket.flat, bucket.offsets
            for i, p in enumerate(bucket.params):
                if globally_used is not None and id(p) not in globally_used:
                    continue
                values = flat[off[i]:off[i + 1]].reshape(p._data.shape)
                if p.grad is None:
                    p.grad = fb.from_numpy(values.copy())
                else:
                    p.grad._data[...] = values
                    p.grad._version_counter[0] += 1
            bucket.work = None
        self.reset()

    def reset(self) -> None:
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.work = None
        self.ready.clear()
        self.unused.clear()
        self.next_bucket = 0
        self.in_progress = False


class DistributedDataParallel(Module):
    r"""Data-parallel training of ``module`` across the processes of a group (PyTorch's DDP).

    Every process wraps the same model; each runs forward and backward on its own part of the batch,
    and after ``backward()`` every process holds the gradients averaged over all of them, so the same
    optimizer step keeps the replicas equal.

    Args:
        module: the module to replicate.
        device_ids, output_device, dim: accepted for PyTorch's signature (one device per process).
        broadcast_buffers: broadcast rank 0's buffers (e.g. BatchNorm statistics) at each forward.
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: the size of a gradient bucket, in megabytes (default 25; the first is 1).
        find_unused_parameters: at each forward, find the parameters the output does not depend on and
            count them as ready (their gradients, zeros, still take part in the average).
        gradient_as_bucket_view, static_graph, check_reduction: accepted for PyTorch's signature.

    Example::

        >>> dist.init_process_group("mpi")                      # doctest: +SKIP
        >>> model = DistributedDataParallel(nn.Linear(10, 1))    # doctest: +SKIP
        >>> model(x).sum().backward()                            # gradients averaged over the ranks
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an nn.Module, got {type(module).__name__}")
        pg = _resolve(process_group, "DistributedDataParallel")
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of process_group")
        params = _unique(p for p in module.parameters() if p.requires_grad)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device for p in params}
        if len(devices) > 1:
            raise ValueError(f"DistributedDataParallel's input module must be on the same type of devices, but "
                             f"input module parameters locate in {sorted(map(str, devices))}.")
        if bucket_cap_mb is not None and not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        self.process_group = pg
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = int((bucket_cap_mb if bucket_cap_mb is not None else _DEFAULT_BUCKET_CAP_MB) * _MB)
        self.bucket_bytes_cap = cap
        if init_sync:
            self._sync_module_states()
        first = min(cap, _DEFAULT_FIRST_BUCKET_BYTES) if bucket_cap_mb is None else cap
        self._params = params
        self.reducer = _Reducer(params, pg, cap, first)
        self.reducer.find_unused = find_unused_parameters
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # The reducer and the group are not parameters or submodules: keep them out of Module's bookkeeping.
    def _grad_ready(self, p: Tensor) -> None:
        if self.require_backward_grad_sync:
            self.reducer.mark_ready(p)

    def _sync_module_states(self) -> None:
        """Broadcast rank 0's parameters and buffers (one message per dtype)."""
        _broadcast_coalesced(self.process_group, [p for p in self.module.parameters()]
                             + [b for b in self.module.buffers()])

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        import flambeau as fb

        if self.reducer.in_progress:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`DistributedDataParallel`, and by making sure all `forward` function outputs participate in "
                "calculating loss.")
        if self.require_forward_param_sync and self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_coalesced(self.process_group, buffers)
        out = self.module(*inputs, **kwargs)
        if self.find_unused_parameters and self.require_backward_grad_sync and fb.is_grad_enabled():
            used = _used_leaves(out)
            for p in self._params:
                if id(p) not in used:
                    self.reducer.unused.add(id(p))
                    self.reducer.mark_ready(p)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within this context, backward accumulates gradients locally without averaging them; the
        first backward after it averages the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _set_static_graph(self) -> None:
        self.static_graph = True


def _unique(params: Iterator[Tensor]) -> list[Tensor]:
    seen: set[int] = set()
    out = []
    for p in params:
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


def _used_leaves(out: Any) -> set[int]:
    """The ids of the leaf tensors whose gradient the outputs depend on (a walk of the backward graph)."""
    roots: list[Any] = []

    def collect(x: Any) -> None:
        if isinstance(x, Tensor):
            if x.grad_fn is not None:
                roots.append(x.grad_fn)
        elif isinstance(x, (list, tuple)):
            for y in x:
                collect(y)
        elif isinstance(x, dict):
            for y in x.values():
                collect(y)

    collect(out)
    used: set[int] = set()
    seen: set[int] = set()
    while roots:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            used.add(id(var))
        for edge in getattr(node, "next_functions", ()) or ():
            if edge and edge[0] is not None:
                roots.append(edge[0])
    return used


def _broadcast_coalesced(pg: Any, tensors: list[Tensor]) -> None:
    import flambeau as fb

    by_dtype: dict[Any, list[Tensor]] = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for group in by_dtype.values():
        flat = np.concatenate([t._data.reshape(-1) for t in group])
        carrier = fb.from_numpy(flat)
        pg.impl(group[0].device.type, "DistributedDataParallel").broadcast(carrier, 0).wait()
        pos = 0
        for t in group:
            n = t.numel()
            t._data[...] = flat[pos:pos + n].reshape(t._data.shape)
            t._version_counter[0] += 1
            pos += n

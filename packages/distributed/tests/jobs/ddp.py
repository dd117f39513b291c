"""DistributedDataParallel against single-process training on the concatenated batch; run by each rank.

Each rank's model starts from different weights (DDP must broadcast rank 0's); each rank trains on its
slice of a global batch. The reference, computed on every rank, is one model trained on the whole batch.
"""
from __future__ import annotations

import sys
from datetime import timedelta

import numpy as np

import flambeau as fb
import flambeau.distributed as dist
from flambeau import nn
from flambeau.nn import functional as F

PER_RANK = 4


class WithUnused(nn.Module):
    """The MLP and a layer that forward never reaches (for find_unused_parameters)."""

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body
        self.unused = nn.Linear(2, 2)

    def forward(self, x: fb.Tensor) -> fb.Tensor:
        return self.body(x)


def make_model(seed: int, extra: bool = False) -> nn.Module:
    fb.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    return WithUnused(model) if extra else model


def batch(n: int, salt: int) -> tuple[fb.Tensor, fb.Tensor]:
    rng = np.random.default_rng(salt)
    x = rng.standard_normal((n * PER_RANK, 6)).astype(np.float32)
    y = rng.integers(0, 3, n * PER_RANK).astype(np.int64)
    return fb.from_numpy(x), fb.from_numpy(y)


def grads(model: nn.Module) -> dict[str, np.ndarray | None]:
    return {k: None if p.grad is None else np.array(p.grad._data) for k, p in model.named_parameters()}


def assert_grads(got: dict, want: dict, what: str) -> None:
    for k, w in want.items():
        g = got[k.removeprefix("module.")] if k.removeprefix("module.") in got else got[k]
        if w is None or g is None:
            assert g is None and w is None, f"{what}: {k}: got {g}, want {w}"
            continue
        if not np.allclose(g, w, rtol=1e-5, atol=1e-6):
            raise AssertionError(f"rank {dist.get_rank()}: {what}: {k} differs by {np.abs(g - w).max()}")


def check_grads(rank: int, n: int, cap: float | None) -> None:
    x, y = batch(n, 1)
    ref = make_model(0)
    F.cross_entropy(ref(x), y).backward()
    ddp = dist.DistributedDataParallel(make_model(rank), bucket_cap_mb=cap)
    launched_at = []  # how many gradients were ready when each bucket's all-reduce started
    if cap is not None:
        assert len(ddp.reducer.buckets) == 4, len(ddp.reducer.buckets)  # one per parameter
        # buckets hold the parameters in reverse order: the last layer's first
        assert ddp.reducer.buckets[0].params[0] is ddp.module[2].bias
        start = ddp.reducer.impl.all_reduce_array

        def recording(flat, op):
            launched_at.append(len(ddp.reducer.ready))
            return start(flat, op)

        ddp.reducer.impl.all_reduce_array = recording
    for (k, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), f"{k} was not broadcast from rank 0"
    mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
    F.cross_entropy(ddp(x[mine]), y[mine]).backward()
    assert_grads(grads(ddp.module), grads(ref), f"grads (bucket_cap_mb={cap})")
    if cap is not None:  # each bucket started as soon as it filled, during backward, not after it
        assert launched_at == [1, 2, 3, 4], launched_at
        del ddp.reducer.impl.all_reduce_array
    assert all(k.startswith("module.") for k in ddp.state_dict()), list(ddp.state_dict())
    assert set(ddp.state_dict()) == {"module." + k for k in ref.state_dict()}

    # no_sync: the first micro-batch accumulates locally, the second averages both
    x2, y2 = batch(n, 2)
    ref.zero_grad()
    (F.cross_entropy(ref(x), y) + F.cross_entropy(ref(x2), y2)).backward()
    ddp.zero_grad()
    with ddp.no_sync():
        F.cross_entropy(ddp(x[mine]), y[mine]).backward()
    local = grads(ddp.module)
    F.cross_entropy(ddp(x2[mine]), y2[mine]).backward()
    assert_grads(grads(ddp.module), grads(ref), "grads after no_sync")
    if n > 1:  # inside no_sync the gradients were this rank's own, not the average
        assert any(not np.allclose(local[k], v) for k, v in grads(ref).items())

    # a few SGD steps keep DDP's weights equal to the single-process run's
    opt_ref = fb.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = fb.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        xs, ys = batch(n, 10 + step)
        opt_ref.zero_grad()
        F.cross_entropy(ref(xs), ys).backward()
        opt_ref.step()
        opt.zero_grad()
        F.cross_entropy(ddp(xs[mine]), ys[mine]).backward()
        opt.step()
    for (k, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6), f"{k} after 3 steps"


def check_unused(rank: int, n: int) -> None:
    x, y = batch(n, 3)
    ref = make_model(0)
    F.cross_entropy(ref(x), y).backward()
    ddp = dist.DistributedDataParallel(make_model(rank, extra=True), find_unused_parameters=True, bucket_cap_mb=1e-5)
    mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
    for _ in range(2):  # a second iteration: the reducer was reset
        ddp.zero_grad()
        F.cross_entropy(ddp(x[mine]), y[mine]).backward()
        got = grads(ddp.module)
        assert got["unused.weight"] is None and got["unused.bias"] is None, "an unused parameter got a gradient"
        assert_grads({k.removeprefix("body."): v for k, v in got.items()}, grads(ref),
                     "grads with find_unused_parameters")

    # without find_unused_parameters, an unused parameter leaves the reduction unfinished: the next
    # forward says so (as PyTorch's)
    ddp = dist.DistributedDataParallel(make_model(rank, extra=True), bucket_cap_mb=1e-5)
    F.cross_entropy(ddp(x[mine]), y[mine]).backward()
    try:
        ddp(x[mine])
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e), str(e)
    else:
        raise AssertionError("an unfinished reduction was not reported")


def check_buffers(rank: int) -> None:
    model = make_model(rank)
    model.register_buffer("running", fb.full((3,), float(rank)))
    ddp = dist.DistributedDataParallel(model)
    assert model.running.tolist() == [0.0, 0.0, 0.0], "buffers were not broadcast at wrap"
    model.running.fill_(float(rank + 5))
    ddp(fb.zeros(1, 6))
    assert model.running.tolist() == [5.0, 5.0, 5.0], "buffers were not broadcast at forward"
    ddp = dist.DistributedDataParallel(model, broadcast_buffers=False)
    model.running.fill_(float(rank + 7))
    ddp(fb.zeros(1, 6))
    assert model.running.tolist() == [float(rank + 7)] * 3, "broadcast_buffers=False broadcast"


def main() -> None:
    dist.init_process_group(timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    check_grads(rank, n, None)
    check_grads(rank, n, 1e-5)
    check_unused(rank, n)
    check_buffers(rank)
    dist.destroy_process_group()
    print(f"rank {rank}: ddp checks passed", flush=True)


if __name__ == "__main__":
    sys.exit(main())

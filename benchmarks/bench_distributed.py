"""flambeau.distributed (MPI) vs torch.distributed (gloo), two processes on this machine, in one run (issue 18).

Cases (bars: flambeau's time at most 1.0x gloo's for all_reduce at 64 MB; at most 1.1x PyTorch DDP's step):
  all_reduce_1KB / _1MB / _64MB   float32 SUM all_reduce: latency (ms) and bus bandwidth
                                   (GB/s, bytes * 2(n-1)/n / time, as nccl-tests count it); fb-nocheck is
                                   flambeau without the cross-rank size check of each collective
  ddp_step                         the 784-512-512-10 ReLU MLP of bench_nn_mlp.py wrapped in DDP, batch 128
                                   per process, CrossEntropyLoss, SGD(lr=0.01, momentum=0.9): zero_grad,
                                   forward, backward (gradients averaged), step

Both processes run both libraries, interleaved in alternating blocks (flambeau, torch, flambeau, ...);
every block starts after a barrier, and rank 0 reports the median block. Usage:
python benchmarks/bench_distributed.py [--rounds N] [--block S] [--threads T]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs mpi4py, mpich and torch). It starts
itself again under mpiexec with two processes.
"""
from __future__ import annotations

import argparse
import gc
import os
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = {"1KB": 1 << 10, "1MB": 1 << 20, "64MB": 64 << 20}
MLP = (784, 512, 512, 10)
BATCH = 128


def _block(fn, calls: int, barrier) -> float:
    barrier()
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - start) / calls
    finally:
        gc.enable()


def _mlp(mod, nn, optim, rank: int):
    rng = np.random.default_rng(0)
    layers = []
    for i, (fin, fout) in enumerate(zip(MLP[:-1], MLP[1:])):
        linear = nn.Linear(fin, fout)
        with mod.no_grad():
            bound = 1.0 / np.sqrt(fin)
            linear.weight.copy_(mod.from_numpy(rng.uniform(-bound, bound, (fout, fin)).astype(np.float32)))
            linear.bias.copy_(mod.from_numpy(rng.uniform(-bound, bound, fout).astype(np.float32)))
        layers.append(linear)
        if i < len(MLP) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def workloads(rank: int, n: int, cases: list[str]):
    import torch
    import torch.distributed as tdist
    import torch.nn as tnn
    import torch.optim as toptim

    import flambeau as fb
    import flambeau.distributed as dist
    import flambeau.nn as fnn
    import flambeau.optim as foptim

    out = {}
    for label, nbytes in SIZES.items():
        if f"all_reduce_{label}" not in cases:
            continue
        a = fb.ones(nbytes // 4)
        b = torch.ones(nbytes // 4)
        c = fb.ones(nbytes // 4)
        impl = dist.group.WORLD.impl("cpu", "bench")
        # fb-nocheck: the same all_reduce without the size check that precedes every collective (one
        # small all-gather; FLAMBEAU_DISTRIBUTED_CHECKS=0 turns it off for a whole job)
        out[f"all_reduce_{label}"] = (nbytes, {
            "flambeau": lambda a=a: dist.all_reduce(a),
            "fb-nocheck": lambda c=c, impl=impl: impl.all_reduce(c, dist.ReduceOp.SUM, check=False).wait(),
            "torch": lambda b=b: tdist.all_reduce(b)})
    if "ddp_step" in cases:
        rng = np.random.default_rng(1 + rank)
        x = rng.standard_normal((BATCH, MLP[0])).astype(np.float32)
        y = rng.integers(0, MLP[-1], BATCH).astype(np.int64)
        steps = {}
        for name, mod, nn, optim, ddp in (
                ("flambeau", fb, fnn, foptim, dist.DistributedDataParallel),
                ("torch", torch, tnn, toptim, tnn.parallel.DistributedDataParallel)):
            model = ddp(_mlp(mod, nn, optim, rank))
            loss_fn = nn.CrossEntropyLoss()
            opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            xs, ys = mod.from_numpy(x.copy()), mod.from_numpy(y.copy())

            def step(model=model, loss_fn=loss_fn, opt=opt, xs=xs, ys=ys):
                opt.zero_grad()
                loss = loss_fn(model(xs), ys)
                loss.backward()
                opt.step()

            steps[name] = step
        out["ddp_step"] = (None, steps)
    return out


def worker(args) -> None:
    import torch
    import torch.distributed as tdist

    import flambeau as fb
    import flambeau.distributed as dist

    fb.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    tdist.init_process_group("gloo", rank=rank, world_size=n)

    def barrier():
        dist.barrier()
        tdist.barrier()

    cases = args.cases.split(",")
    report = []
    for case, (nbytes, fns) in workloads(rank, n, cases).items():
        for fn in fns.values():  # warm up, then calibrate on rank 0 and share the call count
            fn()
            fn()
        start = time.perf_counter()
        fns["flambeau"]()
        calls = [max(1, int(args.block / max(time.perf_counter() - start, 1e-7)))]
        dist.broadcast_object_list(calls, src=0)
        times = {name: [] for name in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                times[name].append(_block(fn, calls[0], barrier))
        report.append((case, nbytes, times))
    if rank == 0:
        print(f"processes={n} threads={args.threads} rounds={args.rounds} block={args.block}s "
              f"load={os.getloadavg()[0]:.1f}")
        print(f"{'case':<16} {'library':<9} {'median':>10} {'min..max (ms)':>19} {'bus GB/s':>9} {'fb speed vs':>11}")
        for case, nbytes, times in report:
            med = {name: statistics.median(t) for name, t in times.items()}
            for name, t in times.items():
                bw = f"{nbytes * 2 * (n - 1) / n / med[name] / 1e9:.2f}" if nbytes else ""
                ratio = f"{med[name] / med['flambeau']:.2f}x" if name != "flambeau" else ""
                print(f"{case:<16} {name:<9} {med[name] * 1e3:>8.3f}ms {min(t) * 1e3:>8.3f}..{max(t) * 1e3:<8.3f} "
                      f"{bw:>9} {ratio:>11}")
    tdist.destroy_process_group()
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=1, help="threads per process (2 processes share the cores)")
    parser.add_argument("--cases", default="all_reduce_1KB,all_reduce_1MB,all_reduce_64MB,ddp_step")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        os.environ.setdefault("RANK", os.environ.get("PMI_RANK", "0"))
        os.environ.setdefault("WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))
        worker(args)
        return
    from flambeau.distributed.run import find_mpiexec

    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.exit("bench_distributed: needs mpi4py and mpich (pip install mpi4py mpich)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    sys.exit(subprocess.call([mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__), "--worker",
                              *sys.argv[1:]], env=env))


if __name__ == "__main__":
    main()

"""An nn training step, flambeau vs PyTorch, interleaved in one run (issue 13's first bar).

Case (bar: flambeau's time at most 1.0x PyTorch's, default thread settings):
  mlp_step   a 784-512-512-10 ReLU MLP (``nn.Sequential`` of ``nn.Linear`` and ``nn.ReLU``),
             ``nn.CrossEntropyLoss`` on a batch of 128, then ``optim.SGD(lr=0.01, momentum=0.9)``:
             ``zero_grad``, forward, loss, ``backward``, ``step``.

Both libraries start from the same weights and data (float32). Usage:
python benchmarks/bench_nn_mlp.py [--rounds N] [--block S] [--threads T] [--cpu-time] [--no-blas-callback]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
--cpu-time times blocks with time.process_time (for one thread on a loaded machine);
--no-blas-callback leaves OpenBLAS on its own pool (measurement only: the ceiling of its own threading).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import _harness as H

SIZES = (784, 512, 512, 10)
BATCH = 128


def _step(mod, nn, optim):
    rng = np.random.default_rng(0)
    layers = []
    for i, (fin, fout) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        linear = nn.Linear(fin, fout)
        with mod.no_grad():
            bound = 1.0 / np.sqrt(fin)
            linear.weight.copy_(mod.from_numpy(rng.uniform(-bound, bound, (fout, fin)).astype(np.float32)))
            linear.bias.copy_(mod.from_numpy(rng.uniform(-bound, bound, fout).astype(np.float32)))
        layers.append(linear)
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = mod.from_numpy(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32))
    y = mod.from_numpy(rng.integers(0, SIZES[-1], BATCH).astype(np.int64))

    def run():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return run


def workloads(libs):
    out = {}
    for lib in libs:
        mod = lib.module
        if lib.name == "torch":
            import torch.nn as nn
            import torch.optim as optim
        else:
            import flambeau.nn as nn
            import flambeau.optim as optim
        out[lib.name] = _step(mod, nn, optim)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--cpu-time", action="store_true", help="time blocks with process_time")
    parser.add_argument("--no-blas-callback", action="store_true",
                        help="measurement only: OpenBLAS keeps its own thread pool (the ceiling)")
    args = parser.parse_args()
    if args.no_blas_callback:
        H.keep_blas_pools()
    H.THREADS = args.threads
    if args.cpu_time:
        H.CLOCK = time.process_time
    libs = H.load_libraries(("flambeau", "torch"))
    results = H.interleave(workloads(libs), args.rounds, args.block)
    rows = H.rows_from("mlp_step", results, "ms", lambda t: t * 1e3, higher_is_better=False)
    clock = "process_time" if args.cpu_time else "wall"
    pools = "OpenBLAS's own" if args.no_blas_callback else "shared (callback)"
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s clock={clock} blas pool={pools}")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

"""Each matrix product of the MLP training step (bench_nn_mlp.py), flambeau vs numpy vs PyTorch.

The 784-512-512-10 MLP's step runs eight products on a batch of 128 (float32), the same calls the
libraries make inside the step:
  fwd1/fwd2/fwd3   ``F.linear(x, W, b)`` = x @ W.T + b      (128x784 . 784x512, 128x512 . 512x512, 128x512 . 512x10)
  gi3/gi2          the input's gradient g @ W             (128x10 . 10x512, 128x512 . 512x512)
  gw3/gw2/gw1      the weight's gradient g.T @ x           (10x128 . 128x512, 512x128 . 128x512, 512x128 . 128x784)
numpy's rows are ``np.matmul`` on the same views (plus the bias add for fwd*), its bundled OpenBLAS
limited to the same thread count: the ceiling flambeau's numpy-based kernels can reach.

Usage: python benchmarks/bench_nn_mlp_gemms.py [--rounds N] [--block S] [--threads T] [--cpu-time] [--no-blas-callback]
--cpu-time times blocks with time.process_time (for one thread on a loaded machine);
--no-blas-callback leaves OpenBLAS on its own pool (measurement only: the ceiling of its own threading).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import _harness as H

BATCH = 128

# name -> (kind, left shape, right shape); kind: "fwd" (left @ right.T + bias), "gi" (left @ right),
# "gw" (left.T @ right)
CASES = {
    "fwd1": ("fwd", (BATCH, 784), (512, 784)),
    "fwd2": ("fwd", (BATCH, 512), (512, 512)),
    "fwd3": ("fwd", (BATCH, 512), (10, 512)),
    "gi3": ("gi", (BATCH, 10), (10, 512)),
    "gi2": ("gi", (BATCH, 512), (512, 512)),
    "gw3": ("gw", (BATCH, 10), (BATCH, 512)),
    "gw2": ("gw", (BATCH, 512), (BATCH, 512)),
    "gw1": ("gw", (BATCH, 512), (BATCH, 784)),
}


def workloads(libs, case: str):
    kind, lshape, rshape = CASES[case]
    rng = np.random.default_rng(0)
    left = rng.standard_normal(lshape).astype(np.float32)
    right = rng.standard_normal(rshape).astype(np.float32)
    bias = rng.standard_normal(rshape[0]).astype(np.float32)
    out = {}
    for lib in libs:
        if lib.name == "numpy":
            a, b, c = left, right, bias
            if kind == "fwd":
                def run(a=a, b=b, c=c):
                    return np.add(np.matmul(a, b.T), c)
            elif kind == "gi":
                def run(a=a, b=b):
                    return np.matmul(a, b)
            else:
                def run(a=a, b=b):
                    return np.matmul(a.T, b)
        else:
            mod = lib.module
            a, b, c = mod.from_numpy(left.copy()), mod.from_numpy(right.copy()), mod.from_numpy(bias.copy())
            if kind == "fwd":
                F = mod.nn.functional

                def run(a=a, b=b, c=c, F=F):
                    return F.linear(a, b, c)
            elif kind == "gi":
                def run(a=a, b=b):
                    return a.matmul(b)
            else:
                def run(a=a, b=b):
                    return a.t().mm(b)
        out[lib.name] = run
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", type=float, default=0.2, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--cpu-time", action="store_true", help="time blocks with process_time")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    parser.add_argument("--no-blas-callback", action="store_true",
                        help="measurement only: OpenBLAS keeps its own thread pool (the ceiling)")
    args = parser.parse_args()
    if args.no_blas_callback:
        H.keep_blas_pools()
    H.THREADS = args.threads
    if args.cpu_time:
        H.CLOCK = time.process_time
    libs = H.load_libraries(("flambeau", "numpy", "torch"))
    import flambeau.nn  # noqa: F401  (makes fb.nn available on the module)

    rows = []
    for case in args.cases.split(","):
        results = H.interleave(workloads(libs, case), args.rounds, args.block)
        rows += H.rows_from(case, results, "us", lambda t: t * 1e6, higher_is_better=False)
    clock = "process_time" if args.cpu_time else "wall"
    pools = "OpenBLAS's own" if args.no_blas_callback else "shared (callback)"
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s clock={clock} blas pool={pools}")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

"""Optimizer steps against PyTorch, interleaved in one run (issue: flambeau-optim).

Cases (bar from the issue: flambeau's time at most 1.0x PyTorch's):
  adam_10M   one ``Adam.step()`` over 10M float32 parameters in 50 tensors of 200k
  sgd_10M    one ``SGD(momentum=0.9).step()`` over the same

flambeau runs its defaults (the fused C++ kernel of the CPU backend). PyTorch runs its defaults
(on the CPU: the single-tensor loop), and, as further rows, ``foreach=True`` and ``fused=True``.
Gradients are set once; every call is one full step.

Usage: python benchmarks/bench_optim.py [--rounds N] [--block S] [--threads T]
(needs flambeau-optim and torch in one environment).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H

N_TENSORS = 50
PER_TENSOR = 200_000  # 10M parameters in all


def _params(lib, rng_seed: int = 0):
    rng = np.random.default_rng(rng_seed)
    params = []
    for _ in range(N_TENSORS):
        p = lib.from_numpy(rng.random(PER_TENSOR, dtype=np.float32))
        p.grad = lib.from_numpy(rng.random(PER_TENSOR, dtype=np.float32) - np.float32(0.5))
        params.append(p)
    return params


def workloads(libs, case: str):
    out = {}
    for lib in libs:
        mod = lib.module
        variants = [("", {})]
        if lib.name == "torch":
            variants += [(" foreach", {"foreach": True}), (" fused", {"fused": True})]
        for suffix, extra in variants:
            params = _params(mod)
            if case == "adam_10M":
                opt = mod.optim.Adam(params, lr=1e-3, **extra)
            else:
                opt = mod.optim.SGD(params, lr=1e-3, momentum=0.9, **extra)
            opt.step()  # state allocated outside the timing
            out[lib.name + suffix] = opt.step
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    import flambeau.optim  # noqa: F401  (makes fb.optim available on the module)

    rows = []
    for case in ("adam_10M", "sgd_10M"):
        results = H.interleave(workloads(libs, case), args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

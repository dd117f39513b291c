"""flambeau.nn against torch.nn, interleaved in one run (issue 13: flambeau-nn).

Cases (bar from the issue: flambeau's time at most 1.0x PyTorch's):
  linear_4x4          ``nn.Linear(4, 4)`` called on a (1, 4) input, parameters requiring grad (the
                      per-call overhead of a small layer: module call, functional form, op, autograd record)
  linear_4x4_nograd   the same inside ``no_grad()``
  linear_512_b128     ``nn.Linear(512, 512)`` on a (128, 512) input, forward only

Usage: python benchmarks/bench_nn_linear.py [--rounds N] [--block S] [--threads T]
(needs flambeau-nn and torch in one environment).
"""
from __future__ import annotations

import argparse

import _harness as H


def workloads(libs, case: str):
    out = {}
    for lib in libs:
        mod = lib.module
        fin, fout, batch = (4, 4, 1) if case.startswith("linear_4x4") else (512, 512, 128)
        layer = mod.nn.Linear(fin, fout)
        x = lib.make((batch, fin))
        if case == "linear_4x4_nograd":
            def run(layer=layer, x=x, mod=mod):
                with mod.no_grad():
                    return layer(x)
        else:
            def run(layer=layer, x=x):
                return layer(x)
        out[lib.name] = run
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.3, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    import flambeau.nn  # noqa: F401  (makes fb.nn available on the module)

    rows = []
    for case in ("linear_4x4", "linear_4x4_nograd", "linear_512_b128"):
        results = H.interleave(workloads(libs, case), args.rounds, args.block)
        rows += H.rows_from(case, results, "us", lambda t: t * 1e6, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

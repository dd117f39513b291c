"""Pointwise catalogue: a fused op (``addcmul``), a binary math function (``hypot``) and a special
function (``lgamma``), at 100 and 1M float32 elements, flambeau vs numpy/scipy vs PyTorch.

Run: ``python benchmarks/bench_pointwise.py [--quick] [--threads N]`` (with PyTorch: from ``.venv-bench``).
Reports the median time per call and, for 1M elements, the throughput in Melem/s.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

SIZES = (100, 1_000_000)


def _workloads(libs: list[Library], op: str, n: int) -> dict:
    from scipy import special

    workloads = {}
    for lib in libs:
        m = lib.module
        x, a, b = lib.make((n,)), lib.make((n,)), lib.make((n,))
        if op == "addcmul" and lib.name == "numpy":
            workloads[lib.name] = (lambda x=x, a=a, b=b: x + 0.5 * (a * b))
        elif op == "addcmul":
            workloads[lib.name] = (lambda x=x, a=a, b=b, g=m.addcmul: g(x, a, b, value=0.5))
        elif op == "hypot":
            workloads[lib.name] = (lambda a=a, b=b, g=m.hypot: g(a, b))
        else:
            g = special.gammaln if lib.name == "numpy" else m.lgamma
            workloads[lib.name] = (lambda x=x, g=g: g(x))
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op in ("addcmul", "hypot", "lgamma"):
        for n in SIZES:
            results = interleave(_workloads(libs, op, n), rounds=3 if quick else 7,
                                 block_seconds=0.1 if quick else 0.25)
            if n >= 1_000_000:
                rows += rows_from(f"{op} {n // 1_000_000}M f32", results, "Melem/s", lambda t, n=n: n / t / 1e6,
                                  higher_is_better=True)
            else:
                rows += rows_from(f"{op} {n} f32", results, "us", lambda t: t * 1e6, higher_is_better=False)
    return rows


if __name__ == "__main__":
    import argparse

    import _harness

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter blocks")
    parser.add_argument("--threads", type=int, default=_harness.THREADS, help="threads for every library")
    args = parser.parse_args()
    _harness.THREADS = args.threads
    print(f"# threads: {args.threads}")
    print(format_rows(run(load_libraries(), quick=args.quick)))

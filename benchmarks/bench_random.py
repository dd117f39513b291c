"""Random sampling: ``rand`` and ``randn`` of float32 at 100 and 1M elements, in M samples/s.

flambeau (``fb.rand(n)``), numpy (``Generator(PCG64).random(n, dtype=float32)`` /
``standard_normal``) and PyTorch (``torch.rand(n)``), interleaved. Each call allocates its result,
as users write it. Run: ``python benchmarks/bench_random.py [--quick] [--threads N]`` (2 threads by default).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _harness  # noqa: E402
from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

SIZES = (100, 1_000_000)


def _workloads(libs: list[Library], op: str, n: int) -> dict:
    import numpy as np

    workloads = {}
    for lib in libs:
        m = lib.module
        if lib.name == "numpy":
            gen = np.random.Generator(np.random.PCG64(0))
            f = (lambda g=gen: g.random(n, dtype=np.float32)) if op == "rand" else \
                (lambda g=gen: g.standard_normal(n, dtype=np.float32))
        else:
            sampler = getattr(m, op)

            def f(g=sampler):
                return g(n)
        workloads[lib.name] = f
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op in ("rand", "randn"):
        for n in SIZES:
            results = interleave(_workloads(libs, op, n), rounds=3 if quick else 7,
                                 block_seconds=0.1 if quick else 0.25)
            if n >= 1_000_000:
                rows += rows_from(f"{op} {n // 1_000_000}M f32", results, "M/s", lambda t, n=n: n / t / 1e6,
                                  higher_is_better=True)
            else:
                rows += rows_from(f"{op} {n} f32", results, "us", lambda t: t * 1e6, higher_is_better=False)
    return rows


if __name__ == "__main__":
    if "--threads" in sys.argv:
        _harness.THREADS = int(sys.argv[sys.argv.index("--threads") + 1])
    libraries = load_libraries()
    print(format_rows(run(libraries, quick="--quick" in sys.argv)))

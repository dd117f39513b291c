"""BLAS and "other" headings: ``addmm`` (beta=0.5, alpha=2) and ``einsum('bij,bjk->bik')``, small
(about 100 output elements) and large (about 1M output elements), float32, flambeau vs numpy vs PyTorch.

Run: ``python benchmarks/bench_blas.py [--quick] [--threads N]`` (with PyTorch: from ``.venv-bench``).
Small sizes report the median time per call; large ones GFLOP/s (2 n m k flops per product).
numpy's references are ``0.5 * c + 2 * (a @ b)`` and ``np.einsum(..., optimize=True)``.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

#: (batch, n, k, m): the product is batch x n x m.
ADDMM_SIZES = ((1, 10, 10, 10), (1, 1024, 1024, 1024))
EINSUM_SIZES = ((4, 5, 5, 5), (16, 256, 256, 256))


def _addmm(libs: list[Library], n: int, k: int, m: int) -> dict:
    workloads = {}
    for lib in libs:
        c, a, b = lib.make((n, m)), lib.make((n, k)), lib.make((k, m))
        if lib.name == "numpy":
            workloads[lib.name] = lambda c=c, a=a, b=b: 0.5 * c + 2 * (a @ b)
        else:
            workloads[lib.name] = lambda c=c, a=a, b=b, f=lib.module.addmm: f(c, a, b, beta=0.5, alpha=2)
    return workloads


def _einsum(libs: list[Library], batch: int, n: int, k: int, m: int) -> dict:
    workloads = {}
    for lib in libs:
        a, b = lib.make((batch, n, k)), lib.make((batch, k, m))
        if lib.name == "numpy":
            workloads[lib.name] = lambda a=a, b=b, f=lib.module.einsum: f("bij,bjk->bik", a, b, optimize=True)
        else:
            workloads[lib.name] = lambda a=a, b=b, f=lib.module.einsum: f("bij,bjk->bik", a, b)
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for name, sizes, make in (("addmm", ADDMM_SIZES, lambda s: _addmm(libs, *s[1:])),
                              ("einsum bij,bjk", EINSUM_SIZES, lambda s: _einsum(libs, *s))):
        for size in sizes:
            batch, n, k, m = size
            results = interleave(make(size), rounds=3 if quick else 7, block_seconds=0.15 if quick else 0.3)
            label = f"{name} {batch}x{n}x{k}x{m}" if batch > 1 else f"{name} {n}x{k}x{m}"
            if batch * n * m >= 1_000_000:
                flops = 2 * batch * n * k * m
                rows += rows_from(label, results, "GFLOP/s", lambda t, f=flops: f / t / 1e9, higher_is_better=True)
            else:
                rows += rows_from(label, results, "us", lambda t: t * 1e6, higher_is_better=False)
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

"""Reductions along one dim of a 1000x1000 float32 tensor: ``sum`` and ``amax`` over dim 0 (across
rows) and dim 1 (along rows), flambeau vs numpy vs PyTorch, interleaved.

numpy's spellings: ``add.reduce`` and ``maximum.reduce`` (NaN propagates, as in the others).
Run: ``python benchmarks/bench_reduce_dims.py [--quick]`` (with PyTorch: from ``.venv-bench``).
Reports throughput in Melem/s of input read.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

N = 1000 * 1000


def _workloads(libs: list[Library], op: str, dim: int) -> dict:
    workloads = {}
    for lib in libs:
        x = lib.make((1000, 1000))
        if lib.name == "numpy":
            ufunc = np.add if op == "sum" else np.maximum
            workloads[lib.name] = lambda x=x, u=ufunc: u.reduce(x, dim)
        else:
            reduce = lib.module.sum if op == "sum" else lib.module.amax
            workloads[lib.name] = lambda x=x, r=reduce: r(x, dim)
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op in ("sum", "amax"):
        for dim in (0, 1):
            results = interleave(_workloads(libs, op, dim), rounds=3 if quick else 7,
                                 block_seconds=0.1 if quick else 0.25)
            rows += rows_from(f"{op} dim {dim} 1M f32", results, "Melem/s", lambda t: N / t / 1e6,
                              higher_is_better=True)
    return rows


if __name__ == "__main__":
    print(format_rows(run(load_libraries(), quick="--quick" in sys.argv)))

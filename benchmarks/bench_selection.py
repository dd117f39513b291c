"""The ops that select or compact rather than map: ``nonzero``, ``x[mask]`` (masked_select),
``median`` along rows, ``unique``, and three that read every element once and lagged PyTorch:
``logsumexp`` along rows, ``clamp`` with two number bounds and the 2-norm.

flambeau vs numpy vs PyTorch, interleaved; 1M elements each (a 1000x1000 float32 with values in
[0.5, 1.5), a random half of them zeroed for ``nonzero``; a random boolean mask of the same shape;
1M int64 values in [0, 100000) for ``unique``).
Run: ``python benchmarks/bench_selection.py [--quick] [--threads N] [op ...]`` (with PyTorch installed to
compare; every library gets N threads, 2 by default).
Reports throughput in Melem/s of input read.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

N = 1000 * 1000


def _inputs(lib: Library) -> dict:
    rng = np.random.default_rng(1)
    half = (rng.random((1000, 1000), dtype=np.float32) + 0.5) * (rng.random((1000, 1000)) < 0.5)
    mask = rng.random((1000, 1000)) < 0.5
    ints = rng.integers(0, 100_000, N, dtype=np.int64)
    if lib.name == "numpy":
        conv = np.asarray
    else:
        conv = lib.module.from_numpy
    return {"x": lib.make((1000, 1000)), "half": conv(half.astype(np.float32)), "mask": conv(mask),
            "ints": conv(ints)}


def _workload(lib: Library, op: str, t: dict):
    x, m = t["x"], lib.module
    if lib.name == "numpy":
        return {
            "nonzero": lambda: np.argwhere(t["half"]),
            "x[mask]": lambda: x[t["mask"]],
            "median(1)": lambda: np.median(x, 1),
            "unique": lambda: np.unique(t["ints"]),
            "logsumexp(1)": lambda: np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1),
            "clamp(0.7, 1.2)": lambda: np.clip(x, 0.7, 1.2),
            "vector_norm": lambda: np.linalg.norm(x.reshape(-1)),
        }[op]
    return {
        "nonzero": lambda: m.nonzero(t["half"]),
        "x[mask]": lambda: x[t["mask"]],
        "median(1)": lambda: m.median(x, 1),
        "unique": lambda: m.unique(t["ints"]),
        "logsumexp(1)": lambda: m.logsumexp(x, 1),
        "clamp(0.7, 1.2)": lambda: m.clamp(x, 0.7, 1.2),
        "vector_norm": lambda: m.linalg.vector_norm(x),
    }[op]


OPS = ("nonzero", "x[mask]", "median(1)", "unique", "logsumexp(1)", "clamp(0.7, 1.2)", "vector_norm")


def run(libs: list[Library], quick: bool = False, ops: tuple[str, ...] = OPS) -> list[Row]:
    inputs = {lib.name: _inputs(lib) for lib in libs}
    rows = []
    for op in ops:
        workloads = {lib.name: _workload(lib, op, inputs[lib.name]) for lib in libs}
        results = interleave(workloads, rounds=3 if quick else 7, block_seconds=0.1 if quick else 0.25)
        rows += rows_from(f"{op} 1M", results, "Melem/s", lambda t: N / t / 1e6, higher_is_better=True)
    return rows


if __name__ == "__main__":
    if "--threads" in sys.argv:  # every library gets N threads (2 by default)
        import _harness

        at = sys.argv.index("--threads")
        _harness.THREADS = int(sys.argv[at + 1])
        del sys.argv[at:at + 2]
    chosen = tuple(a for a in sys.argv[1:] if not a.startswith("--")) or OPS
    print(format_rows(run(load_libraries(), quick="--quick" in sys.argv, ops=chosen)))

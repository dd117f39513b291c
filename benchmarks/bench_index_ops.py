"""Index ops: ``gather`` and ``scatter_add`` along dim 0 of a 2-d float32 tensor, and
``index_select`` of rows, at 100 and 1M elements, flambeau vs numpy vs PyTorch; at 1M also
``gather`` and ``scatter_add`` along dim 1 (the contiguous one), ``v[idx]`` (100k int64 indices into
a 1M-element float32 tensor), ``bincount`` of 1M int64 values in [0, 1000), and ``repeat_interleave`` of
1M counts adding up to 16M.

numpy's spellings: ``take_along_axis``, ``copy`` + ``add.at``, ``take(axis=0)``, ``v[idx]``,
``bincount``, ``repeat(arange(n), counts)``.
Run: ``python benchmarks/bench_index_ops.py [--quick] [--threads N]`` (with PyTorch: from ``.venv-bench``;
every library gets N threads, 2 by default).
Reports the median time per call and, for 1M elements, the throughput in Melem/s (output elements).
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _harness  # noqa: E402
from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

SHAPES = {100: (10, 10), 1_000_000: (1000, 1000)}


def _index(lib: Library, values: np.ndarray):
    if lib.name == "flambeau":
        return lib.module.from_numpy(values)
    if lib.name == "torch":
        return lib.module.from_numpy(values)
    return values


def _workloads(libs: list[Library], op: str, n: int, dim: int = 0) -> dict:
    rows, cols = SHAPES[n]
    rng = np.random.default_rng(0)
    idx2d = rng.integers(0, (rows, cols)[dim], size=(rows, cols))
    idx1d = rng.integers(0, rows, size=rows)
    key = (idx2d, np.arange(cols)[None, :]) if dim == 0 else (np.arange(rows)[:, None], idx2d)
    workloads = {}
    for lib in libs:
        m = lib.module
        x, src = lib.make((rows, cols)), lib.make((rows, cols))
        i2, i1 = _index(lib, idx2d), _index(lib, idx1d)
        numpy = lib.name == "numpy"
        if op == "gather":
            f = (lambda x=x, i=i2: np.take_along_axis(x, i, dim)) if numpy else \
                (lambda x=x, i=i2, g=m.gather: g(x, dim, i))
        elif op == "scatter_add":
            if numpy:
                def f(x=x, s=src):
                    y = x.copy()
                    np.add.at(y, key, s)
                    return y
            else:
                def f(x=x, i=i2, s=src, g=m.scatter_add):
                    return g(x, dim, i, s)
        else:
            f = (lambda x=x, i=i1: np.take(x, i, axis=0)) if numpy else \
                (lambda x=x, i=i1, g=m.index_select: g(x, 0, i))
        workloads[lib.name] = f
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op in ("gather", "scatter_add", "index_select"):
        for n in SHAPES:
            results = interleave(_workloads(libs, op, n), rounds=3 if quick else 7,
                                 block_seconds=0.1 if quick else 0.25)
            if n >= 1_000_000:
                rows += rows_from(f"{op} {n // 1_000_000}M f32", results, "Melem/s", lambda t, n=n: n / t / 1e6,
                                  higher_is_better=True)
            else:
                rows += rows_from(f"{op} {n} f32", results, "us", lambda t: t * 1e6, higher_is_better=False)
    for op in ("gather", "scatter_add"):
        results = interleave(_workloads(libs, op, 1_000_000, dim=1), rounds=3 if quick else 7,
                             block_seconds=0.1 if quick else 0.25)
        rows += rows_from(f"{op} dim 1 1M f32", results, "Melem/s", lambda t: 1e6 / t / 1e6, higher_is_better=True)
    for name, make in (("v[idx] 100k of 1M f32", _advanced), ("bincount 1M i64", _bincount),
                       ("repeat_interleave 16M", _repeat_interleave)):
        results = interleave(make(libs), rounds=3 if quick else 7, block_seconds=0.1 if quick else 0.25)
        n = {"v": 100_000, "r": 16_000_000}.get(name[0], 1_000_000)
        rows += rows_from(name, results, "Melem/s", lambda t, n=n: n / t / 1e6, higher_is_better=True)
    return rows


def _advanced(libs: list[Library]) -> dict:
    rng = np.random.default_rng(0)
    values, idx = rng.random(1_000_000, dtype=np.float32), rng.integers(0, 1_000_000, size=100_000)
    workloads = {}
    for lib in libs:
        v, i = (values, idx) if lib.name == "numpy" else (lib.module.from_numpy(values), _index(lib, idx))
        workloads[lib.name] = lambda v=v, i=i: v[i]
    return workloads


def _bincount(libs: list[Library]) -> dict:
    values = np.random.default_rng(0).integers(0, 1000, size=1_000_000)
    workloads = {}
    for lib in libs:
        x = _index(lib, values)
        workloads[lib.name] = (lambda x=x: np.bincount(x)) if lib.name == "numpy" else \
            (lambda x=x, f=lib.module.bincount: f(x))
    return workloads


def _repeat_interleave(libs: list[Library]) -> dict:
    counts = np.random.default_rng(0).integers(0, 32, size=1_000_000)
    counts[0] += 16_000_000 - int(counts.sum())  # 16M in all
    workloads = {}
    for lib in libs:
        c = _index(lib, counts)
        workloads[lib.name] = (lambda c=c: np.repeat(np.arange(c.size), c)) if lib.name == "numpy" else \
            (lambda c=c, f=lib.module.repeat_interleave: f(c))
    return workloads


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    if "--threads" in sys.argv:
        _harness.THREADS = int(sys.argv[sys.argv.index("--threads") + 1])
    print(format_rows(run(load_libraries(), quick=quick)))

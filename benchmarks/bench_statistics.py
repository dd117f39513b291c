"""Cumulative and ordering ops along the last dim: ``cumsum``, ``sort``, ``topk(k=10)``.

Each at 100 elements (per-call time: framework overhead dominates) and at 1M elements (a 1000x1000
matrix, row-wise, and one 1M-element row: throughput in M elements/s). flambeau, numpy and, when it
imports, PyTorch run interleaved, each with 2 threads. numpy has no stable-index sort or topk of its
own; its rows are ``np.sort`` (values only, unstable) and ``np.argpartition`` + ``np.sort`` of the k.

    python benchmarks/bench_statistics.py [--quick]
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from

K = 10


def _np_topk(a: Any) -> Any:
    import numpy as np

    part = np.argpartition(a, -K, axis=-1)[..., -K:]
    vals = np.take_along_axis(a, part, axis=-1)
    order = np.argsort(-vals, axis=-1)
    return np.take_along_axis(vals, order, axis=-1), np.take_along_axis(part, order, axis=-1)


def _op(lib: Library, op: str) -> Callable[[Any], Any]:
    m = lib.module
    if lib.name == "numpy":
        return {"cumsum": lambda a: m.cumsum(a, axis=-1), "sort": lambda a: m.sort(a, axis=-1),
                "topk": _np_topk}[op]
    return {"cumsum": lambda a: m.cumsum(a, -1), "sort": lambda a: m.sort(a, -1),
            "topk": lambda a: m.topk(a, K, -1)}[op]


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    rounds, block = (3, 0.15) if quick else (7, 0.3)
    for op in ("cumsum", "sort", "topk"):
        for shape, label in (((100,), "100"), ((1000, 1000), "1000x1000"), ((1_000_000,), "1M row")):
            workloads = {}
            for lib in libs:
                a, f = lib.make(shape), _op(lib, op)
                workloads[lib.name] = lambda a=a, f=f: f(a)
            results = interleave(workloads, rounds=rounds, block_seconds=block)
            n = 1
            for s in shape:
                n *= s
            if n <= 100:
                rows += rows_from(f"{op} {label} f32", results, "us", lambda t: t * 1e6, higher_is_better=False)
            else:
                rows += rows_from(f"{op} {label} f32", results, "Melem/s", lambda t, n=n: n / t / 1e6,
                                  higher_is_better=True)
    return rows


if __name__ == "__main__":
    print(format_rows(run(load_libraries(), quick="--quick" in sys.argv)))

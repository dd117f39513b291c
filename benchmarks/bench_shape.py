"""Shape ops: ``cat`` of two tensors along dim 1 (dim 0 would be a plain memcpy), ``stack`` of
four along a new dim 0, ``flip`` and ``roll`` of the last dim and ``tril`` of a square matrix, each at
100 and 1M output elements, flambeau vs numpy vs PyTorch.

numpy's spellings: ``concatenate``, ``stack``, ``flip(...).copy()`` (numpy's flip is a view; the
others copy), ``tril``.
Run: ``python benchmarks/bench_shape.py [--quick]`` (with PyTorch: from ``.venv-bench``).
Reports the median time per call at 100 elements and the throughput in Melem/s (output elements)
at 1M.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from  # noqa: E402

#: output elements -> the (rows, cols) of each input of cat (two of them, joined along dim 1)
SIZES = (100, 1_000_000)


def _shape(n: int, parts: int) -> tuple[int, int]:
    rows = 10 if n == 100 else 1000
    return rows, n // rows // parts


def _workloads(libs: list[Library], op: str, n: int) -> dict:
    workloads = {}
    for lib in libs:
        m, numpy = lib.module, lib.name == "numpy"
        if op == "cat":
            a, b = lib.make(_shape(n, 2)), lib.make(_shape(n, 2))
            f = (lambda a=a, b=b: np.concatenate([a, b], 1)) if numpy else (lambda a=a, b=b, c=m.cat: c([a, b], 1))
        elif op == "stack":
            ts = [lib.make(_shape(n, 4)) for _ in range(4)]
            f = (lambda ts=ts: np.stack(ts, 0)) if numpy else (lambda ts=ts, s=m.stack: s(ts, 0))
        elif op == "roll":
            a = lib.make(_shape(n, 1))
            f = (lambda a=a: np.roll(a, 3, 1)) if numpy else (lambda a=a, r=m.roll: r(a, 3, 1))
        elif op == "flip":
            a = lib.make(_shape(n, 1))
            f = (lambda a=a: np.flip(a, 1).copy()) if numpy else (lambda a=a, fl=m.flip: fl(a, (1,)))
        else:
            side = int(round(n ** 0.5))
            a = lib.make((side, side))
            f = (lambda a=a: np.tril(a)) if numpy else (lambda a=a, t=m.tril: t(a))
        workloads[lib.name] = f
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op in ("cat", "stack", "flip", "roll", "tril"):
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
    quick = "--quick" in sys.argv
    print(format_rows(run(load_libraries(), quick=quick)))

"""Half-precision reductions and products, which accumulate in float32 (issue 11), and the float32
calls that pass through the same wrapper, to show that it costs them nothing measurable.

Rows: ``sum`` of 1M float16 and bfloat16 elements, ``cumsum`` along the rows of a 1000x1000
matrix (a 1M row would overflow float16, and the slow cast to inf would be all one measured),
``mm`` of two 256x256 float16 matrices (flambeau and PyTorch accumulate in float32; numpy's
float16 ``sum`` along a contiguous row does too, its ``cumsum`` and matrix product do not, and
numpy has no bfloat16 of its own: its bfloat16 rows are ml_dtypes'), and a 1-element float32
``sum`` and a 4x4 float32 ``mm`` (per-call overhead). flambeau, numpy and, when it imports,
PyTorch run interleaved, each with 2 threads.

    python benchmarks/bench_half.py [--quick]
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from


def _array(lib: Library, shape: tuple[int, ...], dtype: str) -> Any:
    """``lib``'s array of ``shape`` in ``dtype`` (values in [0.5, 1.5), from the float32 maker)."""
    a = lib.make(shape)
    if lib.name == "numpy":
        if dtype == "bfloat16":
            from ml_dtypes import bfloat16

            return a.astype(bfloat16)
        return a.astype(dtype)
    return a.to(getattr(lib.module, dtype))


def _workload(lib: Library, op: str, a: Any) -> Callable[[], Any]:
    m = lib.module
    if op == "sum":
        return lambda: m.sum(a)
    if op == "cumsum":
        return (lambda: m.cumsum(a, -1)) if lib.name != "numpy" else (lambda: m.cumsum(a, axis=-1))
    return lambda: m.matmul(a, a)


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rounds, block = (3, 0.1) if quick else (7, 0.25)
    rows: list[Row] = []
    cases = [("sum", (1_000_000,), "float16"), ("sum", (1_000_000,), "bfloat16"),
             ("cumsum", (1000, 1000), "float16"), ("cumsum", (1000, 1000), "bfloat16"),
             ("mm", (256, 256), "float16")]
    for op, shape, dtype in cases:
        workloads = {}
        for lib in libs:
            workloads[lib.name] = _workload(lib, op, _array(lib, shape, dtype))
        results = interleave(workloads, rounds=rounds, block_seconds=block)
        label = "1M" if len(shape) == 1 else "x".join(map(str, shape))
        rows += rows_from(f"{op} {label} {dtype}", results, "ms", lambda t: t * 1e3, higher_is_better=False)
    for op, shape in (("sum", (1,)), ("mm", (4, 4))):
        workloads = {lib.name: _workload(lib, op, lib.make(shape)) for lib in libs}
        results = interleave(workloads, rounds=rounds, block_seconds=block)
        rows += rows_from(f"{op} {'x'.join(map(str, shape))} float32", results, "us", lambda t: t * 1e6,
                          higher_is_better=False)
    return rows


if __name__ == "__main__":
    print(format_rows(run(load_libraries(), quick="--quick" in sys.argv)))

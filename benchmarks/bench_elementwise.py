"""(b) Elementwise throughput: add, mul, exp over 16M float32 elements, in GB/s.

Bytes counted are those read plus those written (``a + b``: 3 x 64 MiB; ``exp(a)``: 2 x 64 MiB).
Each op is timed twice: allocating its result, as users write it (which includes the page
faults of a fresh 64 MiB buffer), and into a preallocated ``out=``, which isolates the kernel.
"""
from __future__ import annotations

from _harness import Library, Row, interleave, rows_from

N = 16 * 1024 * 1024
ITEM = 4  # float32


def _workloads(libs: list[Library], op: str, preallocated: bool) -> dict:
    workloads = {}
    for lib in libs:
        m = lib.module
        a, b = lib.make((N,)), lib.make((N,))
        out = lib.empty((N,))
        if op == "add":
            g = m.add
            f = (lambda a=a, b=b, o=out, g=g: g(a, b, out=o)) if preallocated else (lambda a=a, b=b: a + b)
        elif op == "mul":
            g = m.multiply if lib.name == "numpy" else m.mul
            f = (lambda a=a, b=b, o=out, g=g: g(a, b, out=o)) if preallocated else (lambda a=a, b=b: a * b)
        else:
            g = m.exp
            f = (lambda a=a, o=out, g=g: g(a, out=o)) if preallocated else (lambda a=a, g=g: g(a))
        workloads[lib.name] = f
    return workloads


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows = []
    for op, arrays in (("add", 3), ("mul", 3), ("exp", 2)):
        for preallocated in (False, True):
            results = interleave(_workloads(libs, op, preallocated), rounds=3 if quick else 7,
                                 block_seconds=0.15 if quick else 0.3)
            label = f"{op} 16M f32" + (" out=" if preallocated else "")
            rows += rows_from(label, results, "GB/s", lambda t, k=arrays: k * N * ITEM / t / 1e9,
                              higher_is_better=True)
    return rows


if __name__ == "__main__":
    from run import main

    main(["elementwise"])

"""(c) Reduction throughput: ``sum`` of 16M float32 elements to a scalar, in GB/s read."""
from __future__ import annotations

from _harness import Library, Row, interleave, rows_from

N = 16 * 1024 * 1024


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    workloads = {}
    for lib in libs:
        a = lib.make((N,))
        workloads[lib.name] = lambda a=a, m=lib.module: m.sum(a)
    results = interleave(workloads, rounds=3 if quick else 9, block_seconds=0.15 if quick else 0.3)
    return rows_from("sum 16M f32", results, "GB/s", lambda t: N * 4 / t / 1e9, higher_is_better=True)


if __name__ == "__main__":
    from run import main

    main(["reduction"])

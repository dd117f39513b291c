"""(d) A 1024 x 1024 float32 matmul, in GFLOP/s (2 n^3 flops per product)."""
from __future__ import annotations

from _harness import Library, Row, interleave, rows_from

N = 1024


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    workloads = {}
    for lib in libs:
        a, b = lib.make((N, N)), lib.make((N, N))
        workloads[lib.name] = lambda a=a, b=b: a @ b
    results = interleave(workloads, rounds=3 if quick else 9, block_seconds=0.2 if quick else 0.4)
    return rows_from("matmul 1024^2 f32", results, "GFLOP/s", lambda t: 2 * N**3 / t / 1e9,
                     higher_is_better=True)


if __name__ == "__main__":
    from run import main

    main(["matmul"])

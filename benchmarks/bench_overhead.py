"""(a) Framework overhead: a 1-element float32 ``a + b`` with grad off, in µs per call.

With one element the kernel's arithmetic is nothing; what is left is the cost of the Python
operator, argument checks, dispatch, allocation and wrapping the result.
"""
from __future__ import annotations

from _harness import Library, Row, interleave, rows_from


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    workloads = {}
    for lib in libs:
        a, b = lib.make((1,)), lib.make((1,))
        workloads[lib.name] = lambda a=a, b=b: a + b
    results = interleave(workloads, rounds=5 if quick else 15, block_seconds=0.05 if quick else 0.1)
    return rows_from("a + b, 1 elem (overhead)", results, "us", lambda t: t * 1e6, higher_is_better=False)


if __name__ == "__main__":
    from run import main

    main(["overhead"])

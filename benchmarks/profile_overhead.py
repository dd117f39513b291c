"""Where the time of a 1-element ``a + b`` goes: the dispatcher's parts, timed one by one.

``python benchmarks/profile_overhead.py [--quick]``. Every part is timed in interleaved blocks
(as the benchmarks are) and the median per-call time is printed; "glue" is the whole call minus
the parts: the operator slot, argument checks, device and grad checks, table lookups, and the
calls between them. The kernel and allocator rows are the CPU backend's; meta is core-tensor's
declaration of ``add``.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from _harness import interleave  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    import flambeau as fb
    from flambeau._tensor import wrap
    from flambeau.ops._registry import OPS, TABLES

    a, b = fb.ones(1), fb.ones(1)
    na, nb = a._data, b._data
    table = TABLES["cpu"]
    kernel, meta, empty = table["add"], OPS["add"].meta, table.empty
    dt, dev = a._dtype, a._device
    o = np.empty(1, np.float32)
    parts = {
        "a + b (whole call)": lambda: a + b,
        "meta (add's checks)": lambda: meta(a, b, 1),
        "allocate (backend.empty)": lambda: empty((1,), dt, dev),
        "kernel (cpu add)": lambda: kernel(na, nb, 1, out=o),
        "wrap (new Tensor)": lambda: wrap(o, dt, dev),
        "numpy: np.add(x, y, out=o)": lambda: np.add(na, nb, out=o),
        "numpy: x + y": lambda: na + nb,
        "empty lambda (loop cost)": lambda: None,
    }
    results = interleave(parts, rounds=5 if args.quick else 15, block_seconds=0.03 if args.quick else 0.08,
                         switch_sleep=0.0)
    base = results["empty lambda (loop cost)"].median
    ns = {name: (r.median - base) * 1e9 for name, r in results.items() if name != "empty lambda (loop cost)"}
    ns["glue (whole - meta - allocate - kernel - wrap)"] = ns["a + b (whole call)"] - sum(
        ns[k] for k in ("meta (add's checks)", "allocate (backend.empty)", "kernel (cpu add)", "wrap (new Tensor)"))
    for name, value in ns.items():
        print(f"{name:<48} {value:7.0f} ns")
    return ns


if __name__ == "__main__":
    main()

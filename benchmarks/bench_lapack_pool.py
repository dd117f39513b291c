"""LU-based linalg followed by a threaded kernel: does LAPACK leave a second pool spinning? (issue 11)

flambeau runs BLAS's parallel jobs on the kernels' OpenMP team (``flambeau_cpu._threads``), so that
no second pool of threads spins on the cores the kernels need next. scipy.linalg (lu_factor, solve,
cholesky...) brings its own OpenBLAS, loaded at the first linalg call; before that OpenBLAS was
handed the team too, its getrf ran on its own pthreads pool, whose workers then spin about 0.1 s.

Each case times one iteration of ``op(A); x.sum()`` (A: 400x400 float64, x: 2M float32), and the
sum's share of it, at default thread settings. ``--before`` keeps scipy's OpenBLAS off the shared
pool (the behaviour before the fix), in a process of its own; without arguments both modes run.
Usage: ``cd benchmarks && env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ../.venv/bin/python bench_lapack_pool.py``
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

CASES = ("lu_factor", "solve", "det", "inv")


def _measure(before: bool, rounds: int = 30) -> dict[str, tuple[float, float]]:
    import flambeau as fb
    from flambeau_cpu import _threads

    if before:
        _threads.share_new_pools = lambda: None  # noqa: E731  (scipy's OpenBLAS keeps its own pool)
    a = fb.randn(400, 400, dtype=fb.float64)
    b = fb.randn(400, 8, dtype=fb.float64)
    x = fb.randn(2_000_000)
    ops = {"lu_factor": lambda: fb.linalg.lu_factor(a), "solve": lambda: fb.linalg.solve(a, b),
           "det": lambda: fb.linalg.det(a), "inv": lambda: fb.linalg.inv(a)}
    results = {}
    for name in CASES:
        op = ops[name]
        op(), x.sum()  # warm up (loads scipy on the first scipy-backed case)
        whole, sums = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            op()
            t1 = time.perf_counter()
            x.sum()
            t2 = time.perf_counter()
            whole.append(t2 - t0)
            sums.append(t2 - t1)
        results[name] = (statistics.median(whole) * 1e3, statistics.median(sums) * 1e3)
    alone = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        x.sum()
        alone.append(time.perf_counter() - t0)
    results["sum alone"] = (statistics.median(alone) * 1e3, statistics.median(alone) * 1e3)
    results["pools shared"] = tuple(os.path.basename(p) for p in _threads.shared)
    return results


def main() -> None:
    if "--child" in sys.argv:
        print(repr(_measure("--before" in sys.argv)))
        return
    chosen = [m for m in ("--before", "--after") if m in sys.argv]
    modes = chosen[:1] or ["--before", "--after"]
    rows = {}
    for mode in modes:
        out = subprocess.run([sys.executable, __file__, "--child", mode], capture_output=True, text=True, check=True)
        rows[mode] = eval(out.stdout.strip().splitlines()[-1])  # our own repr of floats and strings
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print(f"{'case':<12}" + "".join(f"{m.strip('-') + ' op+sum ms':>20}{'sum ms':>10}" for m in modes))
    for case in (*CASES, "sum alone"):
        print(f"{case:<12}" + "".join(f"{rows[m][case][0]:>20.2f}{rows[m][case][1]:>10.2f}" for m in modes))
    for m in modes:
        print(f"{m.strip('-')}: OpenBLAS on the shared pool: {', '.join(rows[m]['pools shared'])}")


if __name__ == "__main__":
    main()

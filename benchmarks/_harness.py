"""Interleaved timing of one workload across libraries (flambeau, numpy, PyTorch).

Every benchmark runs its libraries in alternating blocks, ``A B C A B C ...``, so that a
noisy neighbour or a CPU frequency change hurts all of them alike, and reports the median
block. Between library switches the harness sleeps briefly so that the previous library's
worker threads (OpenBLAS spins about 0.1 s after a call, OpenMP pools similarly) have gone
idle and do not steal a core from the next one.
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

#: Seconds to sleep between two blocks of different libraries (lets spinning BLAS/OpenMP threads park).
SWITCH_SLEEP = 0.2
THREADS = 2
#: The clock blocks are timed with: wall time; a benchmark may set ``time.process_time`` (CPU time,
#: meaningful for single-threaded runs on a loaded machine).
CLOCK = time.perf_counter


@dataclass
class Library:
    """One library under test: its name, its module, and how to make arrays with it."""

    name: str
    module: Any
    #: float32 array of a shape, filled with values in [0.5, 1.5) (so that exp and sums stay finite).
    make: Callable[[tuple[int, ...]], Any]
    #: an empty float32 array of a shape (for preallocated outputs).
    empty: Callable[[tuple[int, ...]], Any]


@dataclass
class Result:
    """The per-call times (seconds) of every block of one library in one benchmark."""

    library: str
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def load_libraries(names: tuple[str, ...] = ("flambeau", "numpy", "torch")) -> list[Library]:
    """The libraries among ``names`` that import, each set to ``THREADS`` threads."""
    import numpy as np

    rng = np.random.default_rng(0)

    def np_make(shape):
        return (rng.random(shape, dtype=np.float32) + np.float32(0.5))

    libs: list[Library] = []
    for name in names:
        if name == "numpy":
            _limit_blas_threads()
            libs.append(Library("numpy", np, np_make, lambda s: np.empty(s, np.float32)))
        elif name == "flambeau":
            import flambeau as fb

            fb.set_num_threads(THREADS)
            libs.append(Library("flambeau", fb, lambda s: fb.from_numpy(np_make(s)),
                                lambda s: fb.empty(s, dtype=fb.float32)))
        elif name == "torch":
            try:
                import torch
            except ImportError:
                continue
            torch.set_num_threads(THREADS)
            libs.append(Library("torch", torch, lambda s: torch.from_numpy(np_make(s)),
                                lambda s: torch.empty(s, dtype=torch.float32)))
    return libs


def keep_blas_pools() -> None:
    """Leave every OpenBLAS on its own thread pool: flambeau_cpu registers no threads callback.

    For measurement only (call it before ``load_libraries``): it shows the ceiling of OpenBLAS's own
    partitioning and wake-ups against the callback's OpenMP team, and brings the two-pool thread
    fight of issue 11 back for anything that mixes BLAS with the C++ kernels.
    """
    from flambeau_cpu import _C

    _C.share_blas_pools = lambda: []  # read through the module at each call (_threads._native)


def _limit_blas_threads() -> None:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # numpy's OpenBLAS then uses its default (one thread per core: 2 here)
        return
    threadpool_limits(THREADS, user_api="blas")


def blas_info() -> list[str]:
    """Which BLAS/OpenMP libraries are loaded, and which OpenBLAS kernel they picked."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl not installed"]
    return [f"{i.get('prefix')} {i.get('version')} {i.get('architecture', '')} threads={i.get('num_threads')}".strip()
            for i in threadpool_info()]


def calibrate(fn: Callable[[], Any], block_seconds: float) -> int:
    """How many calls of ``fn`` make one block of about ``block_seconds``."""
    fn()  # warm up (first-call allocations, lazy loading)
    n = 1
    while True:
        start = CLOCK()
        for _ in range(n):
            fn()
        elapsed = CLOCK() - start
        if elapsed >= block_seconds / 4 or n >= 1 << 22:
            return max(1, int(n * block_seconds / max(elapsed, 1e-9)))
        n *= 4


def time_block(fn: Callable[[], Any], calls: int) -> float:
    """Seconds per call over one block of ``calls`` calls, with the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        start = CLOCK()
        for _ in range(calls):
            fn()
        return (CLOCK() - start) / calls
    finally:
        gc.enable()


def interleave(workloads: dict[str, Callable[[], Any]], rounds: int, block_seconds: float,
               switch_sleep: float = SWITCH_SLEEP) -> dict[str, Result]:
    """Time each library's workload in ``rounds`` alternating blocks; per-call seconds per block."""
    calls = {}
    for name, fn in workloads.items():
        calls[name] = calibrate(fn, block_seconds)
        time.sleep(switch_sleep)
    results = {name: Result(name) for name in workloads}
    for _ in range(rounds):
        for name, fn in workloads.items():
            results[name].times.append(time_block(fn, calls[name]))
            time.sleep(switch_sleep)
    return results


@dataclass
class Row:
    """One line of the report: a benchmark, a library, its median, and its ratio to flambeau."""

    benchmark: str
    library: str
    value: float  # in ``unit``
    unit: str
    higher_is_better: bool
    spread: tuple[float, float]  # min and max over blocks, in ``unit``

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "library": self.library, "value": self.value, "unit": self.unit,
                "higher_is_better": self.higher_is_better, "min": self.spread[0], "max": self.spread[1]}


def rows_from(benchmark: str, results: dict[str, Result], unit: str, convert: Callable[[float], float],
              higher_is_better: bool) -> list[Row]:
    rows = []
    for name, res in results.items():
        values = [convert(t) for t in res.times]
        rows.append(Row(benchmark, name, statistics.median(values), unit, higher_is_better,
                        (min(values), max(values))))
    return rows


def format_rows(rows: list[Row]) -> str:
    """A plain-text table; ``vs fb`` is other/flambeau for times and flambeau/other for rates,
    so that above 1 always means flambeau is faster."""
    lines = [f"{'benchmark':<28} {'library':<9} {'median':>11} {'unit':<7} {'min..max':>21} {'fb speed vs':>11}"]
    by_bench: dict[str, dict[str, Row]] = {}
    for r in rows:
        by_bench.setdefault(r.benchmark, {})[r.library] = r
    for bench, libs in by_bench.items():
        fb = libs.get("flambeau")
        for lib, r in libs.items():
            ratio = ""
            if fb is not None and lib != "flambeau" and r.value and fb.value:
                speed = fb.value / r.value if r.higher_is_better else r.value / fb.value
                ratio = f"{speed:.2f}x"
            lines.append(f"{bench:<28} {lib:<9} {_fmt(r.value):>11} {r.unit:<7} "
                         f"{_fmt(r.spread[0]) + '..' + _fmt(r.spread[1]):>21} {ratio:>11}")
    return "\n".join(lines)


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"

"""``linalg.solve`` and ``fft``: flambeau vs numpy vs (when it imports) PyTorch, interleaved.

- ``solve`` of a 256x256 float32 system (one right-hand side) and of a batch of 100 8x8 systems;
- ``det`` and ``inv`` of 128x128 and 400x400 float64 matrices: LU (getrf), which OpenBLAS runs partly
  on its own pool. numpy's rows run in the same process as flambeau, whose BLAS callback is then set
  on numpy's OpenBLAS too: they show what ``import flambeau`` does to a user's own ``np.linalg`` calls;
- ``fft`` of complex64 signals of 100 and of 2^20 (~1M) elements; where the CPU backend's ``mkl``
  extra is installed, again with flambeau forced onto its pocketfft fallback (rows "... pocketfft").

Small inputs report the per-call time (us; framework overhead dominates), large ones throughput
(M elements/s of the input). Each library runs with the harness's thread count.

    python benchmarks/bench_linalg.py [--quick]
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from _harness import Library, Row, format_rows, interleave, load_libraries, rows_from


def _wrap(lib: Library, a: np.ndarray) -> Any:
    if lib.name == "numpy":
        return a
    return lib.module.from_numpy(a.copy())


def _solve(lib: Library) -> Callable[[Any, Any], Any]:
    if lib.name == "numpy":  # numpy >= 2 takes a batch of vectors only as (..., n, 1)
        return lambda a, b: lib.module.linalg.solve(a, b[..., None])[..., 0]
    return lib.module.linalg.solve


def _fft(lib: Library) -> Callable[[Any], Any]:
    return lib.module.fft.fft


def _fft_paths() -> list[tuple[str, Any]]:
    """(label suffix, value for flambeau_cpu's fft_ops._MKL) per FFT path to measure."""
    try:
        from flambeau_cpu.kernels import fft_ops
    except ImportError:
        return [("", None)]
    mkl = fft_ops._mkl()
    return [("", mkl)] if mkl is None else [("", mkl), (" pocketfft", None)]


def _systems(rng: np.random.Generator, batch: tuple[int, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    a = (rng.random(batch + (n, n), dtype=np.float32) + n * np.eye(n, dtype=np.float32)).astype(np.float32)
    b = rng.random(batch + (n,), dtype=np.float32)
    return a, b


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    rounds, block = (3, 0.15) if quick else (7, 0.3)
    rng = np.random.default_rng(0)
    for label, batch, n in (("solve 256x256 f32", (), 256), ("solve 100x(8x8) f32", (100,), 8)):
        a, b = _systems(rng, batch, n)
        workloads = {}
        for lib in libs:
            A, B, f = _wrap(lib, a), _wrap(lib, b), _solve(lib)
            workloads[lib.name] = lambda A=A, B=B, f=f: f(A, B)
        results = interleave(workloads, rounds=rounds, block_seconds=block)
        rows += rows_from(label, results, "us", lambda t: t * 1e6, higher_is_better=False)
    for name in ("det", "inv"):
        for n in (128, 400):
            a = rng.standard_normal((n, n))
            workloads = {}
            for lib in libs:
                A, f = _wrap(lib, a), getattr(lib.module.linalg, name)
                workloads[lib.name] = lambda A=A, f=f: f(A)
            results = interleave(workloads, rounds=rounds, block_seconds=block)
            rows += rows_from(f"{name} {n}x{n} f64", results, "us", lambda t: t * 1e6, higher_is_better=False)
    paths = _fft_paths()
    for suffix, mkl in paths:
        if len(paths) > 1:
            from flambeau_cpu.kernels import fft_ops
            fft_ops._MKL = mkl  # flambeau's rows below use this path; numpy's and torch's are unchanged
        for label, size in (("fft 100 c64", 100), ("fft 1M c64", 1 << 20)):
            x = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(np.complex64)
            workloads = {}
            for lib in libs:
                X, f = _wrap(lib, x), _fft(lib)
                workloads[lib.name] = lambda X=X, f=f: f(X)
            results = interleave(workloads, rounds=rounds, block_seconds=block)
            if size <= 100:
                rows += rows_from(label + suffix, results, "us", lambda t: t * 1e6, higher_is_better=False)
            else:
                rows += rows_from(label + suffix, results, "Melem/s", lambda t, n=size: n / t / 1e6,
                                  higher_is_better=True)
    if len(paths) > 1:
        fft_ops._MKL = paths[0][1]
    return rows


if __name__ == "__main__":
    print(format_rows(run(load_libraries(), quick="--quick" in sys.argv)))

"""flambeau-nn layers, flambeau vs PyTorch: each helper's cases in their own functions.

Normalization and embedding cases (bar: flambeau's time at most 1.0x PyTorch's; float32):
  layer_norm_fwd   ``F.layer_norm(x, (1024,), w, b)`` on x of shape (4096, 1024)
  layer_norm_bwd   the same forward, then ``backward`` of its output with a fixed gradient
  embedding_fwd    ``F.embedding(idx, w)``, w (50000, 256), idx (64, 128) int64
  embedding_bwd    the same forward, then ``backward`` with a fixed gradient
  batch_norm2d     ``F.batch_norm`` in training, x (64, 64, 32, 32), affine, running stats; forward+backward

Usage: python benchmarks/bench_nn.py [--rounds N] [--block S] [--cases a,b]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
Libraries alternate block by block (``_harness.interleave``); the table shows medians over blocks.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

import _harness as H

BAR = 1.0


def _libraries() -> dict[str, object]:
    import flambeau
    import flambeau.nn.functional

    libs: dict[str, object] = {"flambeau": flambeau}
    try:
        import torch
        import torch.nn.functional  # noqa: F401
    except ImportError:
        pass
    else:
        libs["torch"] = torch
    return libs


def _t(lib, array: np.ndarray, requires_grad: bool = False):
    t = lib.from_numpy(array.copy())
    return t.requires_grad_(True) if requires_grad else t


# -- normalization and embeddings (helper nnnorm) ---------------------------------------------------

def _layer_norm_data(lib):
    rng = np.random.default_rng(0)
    x = _t(lib, rng.standard_normal((4096, 1024)).astype(np.float32), True)
    w = _t(lib, rng.standard_normal(1024).astype(np.float32), True)
    b = _t(lib, rng.standard_normal(1024).astype(np.float32), True)
    g = _t(lib, rng.standard_normal((4096, 1024)).astype(np.float32))
    return x, w, b, g


def layer_norm_fwd(lib):
    x, w, b, _ = _layer_norm_data(lib)
    F = lib.nn.functional

    def run():
        with lib.no_grad():
            F.layer_norm(x, (1024,), w, b)
    return run


def layer_norm_bwd(lib):
    x, w, b, g = _layer_norm_data(lib)
    F = lib.nn.functional

    def run():
        x.grad = w.grad = b.grad = None
        F.layer_norm(x, (1024,), w, b).backward(g)
    return run


def _embedding_data(lib):
    rng = np.random.default_rng(1)
    w = _t(lib, rng.standard_normal((50000, 256)).astype(np.float32), True)
    idx = lib.from_numpy(rng.integers(0, 50000, (64, 128)).astype(np.int64))
    g = _t(lib, rng.standard_normal((64, 128, 256)).astype(np.float32))
    return w, idx, g


def embedding_fwd(lib):
    w, idx, _ = _embedding_data(lib)
    F = lib.nn.functional

    def run():
        with lib.no_grad():
            F.embedding(idx, w)
    return run


def embedding_bwd(lib):
    w, idx, g = _embedding_data(lib)
    F = lib.nn.functional

    def run():
        w.grad = None
        F.embedding(idx, w).backward(g)
    return run


def batch_norm2d(lib):
    rng = np.random.default_rng(2)
    x = _t(lib, rng.standard_normal((64, 64, 32, 32)).astype(np.float32), True)
    w = _t(lib, np.ones(64, np.float32), True)
    b = _t(lib, np.zeros(64, np.float32), True)
    rm, rv = _t(lib, np.zeros(64, np.float32)), _t(lib, np.ones(64, np.float32))
    g = _t(lib, rng.standard_normal((64, 64, 32, 32)).astype(np.float32))
    F = lib.nn.functional

    def run():
        x.grad = w.grad = b.grad = None
        F.batch_norm(x, rm, rv, w, b, training=True).backward(g)
    return run


NORM_CASES = {"layer_norm_fwd": layer_norm_fwd, "layer_norm_bwd": layer_norm_bwd, "embedding_fwd": embedding_fwd,
              "embedding_bwd": embedding_bwd, "batch_norm2d": batch_norm2d}

CASES = {**NORM_CASES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    libs = _libraries()
    for lib in libs.values():
        lib.set_num_threads(H.THREADS)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    rows: list[H.Row] = []
    for case in args.cases.split(","):
        workloads = {name: CASES[case](lib) for name, lib in libs.items()}
        results = H.interleave(workloads, args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads: {H.THREADS}; load average at end: {os.getloadavg()[0]:.2f}")
    print(H.format_rows(rows))
    by_case: dict[str, dict[str, float]] = {}
    for r in rows:
        by_case.setdefault(r.benchmark, {})[r.library] = r.value
    if all("torch" in v for v in by_case.values()):
        print(f"\nflambeau / torch time (bar <= {BAR}x):")
        for case, v in by_case.items():
            ratio = v["flambeau"] / v["torch"]
            print(f"  {case:<16} {ratio:5.2f}x  {'ok' if ratio <= BAR else 'OVER'}")


if __name__ == "__main__":
    main()

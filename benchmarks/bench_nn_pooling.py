"""flambeau-nn pooling, flambeau vs PyTorch (bar: flambeau's time at most 1.0x PyTorch's; float32).

  maxpool2d_fwd       ``F.max_pool2d(x, 2)`` on x (64, 32, 28, 28), the CNN's MaxPool2d(2)
  maxpool2d_fwdbwd    the same, then ``backward`` with a fixed gradient
  avgpool2d_fwd       ``F.avg_pool2d(x, 2)`` on x (64, 32, 28, 28)
  avgpool2d_fwdbwd    the same, then ``backward``
  gap_small_fwd       ``F.adaptive_avg_pool2d(x, 1)`` on x (8, 512, 2, 2) (ResNet-18's head at 64x64)
  gap_small_fwdbwd    the same, then ``backward``
  gap_large_fwd       ``F.adaptive_avg_pool2d(x, 1)`` on x (8, 64, 16, 16)
  gap_large_fwdbwd    the same, then ``backward``

Usage: python benchmarks/bench_nn_pooling.py [--rounds N] [--block S] [--cases a,b]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
Libraries alternate block by block (``_harness.interleave``); the table shows medians over blocks.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, Callable

import numpy as np

import _harness as H

BAR = 1.0


def _libraries() -> dict[str, object]:
    import flambeau
    import flambeau.nn.functional  # noqa: F401

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


def _case(shape: tuple[int, ...], pool: Callable[[Any, Any], Any], backward: bool) -> Callable[[Any], Any]:
    def make(lib):
        rng = np.random.default_rng(0)
        x = _t(lib, rng.standard_normal(shape).astype(np.float32), backward)
        F = lib.nn.functional
        g = _t(lib, np.asarray(pool(F, _t(lib, np.zeros(shape, np.float32))).detach().numpy()) + 1.0)

        if backward:
            def run():
                x.grad = None
                pool(F, x).backward(g)
        else:
            def run():
                with lib.no_grad():
                    pool(F, x)
        return run
    return make


def _max2(F, x):
    return F.max_pool2d(x, 2)


def _avg2(F, x):
    return F.avg_pool2d(x, 2)


def _gap(F, x):
    return F.adaptive_avg_pool2d(x, 1)


CNN = (64, 32, 28, 28)
CASES = {
    "maxpool2d_fwd": _case(CNN, _max2, False), "maxpool2d_fwdbwd": _case(CNN, _max2, True),
    "avgpool2d_fwd": _case(CNN, _avg2, False), "avgpool2d_fwdbwd": _case(CNN, _avg2, True),
    "gap_small_fwd": _case((8, 512, 2, 2), _gap, False), "gap_small_fwdbwd": _case((8, 512, 2, 2), _gap, True),
    "gap_large_fwd": _case((8, 64, 16, 16), _gap, False), "gap_large_fwdbwd": _case((8, 64, 16, 16), _gap, True),
}


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
            print(f"  {case:<18} {ratio:5.2f}x  {'ok' if ratio <= BAR else 'OVER'}")


if __name__ == "__main__":
    main()

"""flambeau.nn against torch.nn, interleaved in one run (issue 13's bars; float32, default threads).

Cases (bar: flambeau's time at most 1.0x PyTorch's):
  log_softmax_nll     ``F.nll_loss(F.log_softmax(x, 1), t)`` forward and backward, x (4096, 1024)
  cross_entropy       ``F.cross_entropy(x, t)`` forward and backward, x (4096, 1024)
  softmax_fwd         ``F.softmax(x, 1)`` forward, x (4096, 1024)
  log_softmax_nll_fwd the first case's forward only
  cross_entropy_fwd   the second case's forward only

Usage: python benchmarks/bench_nn_loss.py [--rounds N] [--block S] [--cases a,b]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
Libraries alternate block by block (``_harness.interleave``); the table shows medians over blocks.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

import _harness as H

BAR = 1.0
ROWS, CLASSES = 4096, 1024


def _libraries() -> dict[str, object]:
    """flambeau and (if installed) torch, each with its ``nn.functional``, at default thread settings."""
    import flambeau
    import flambeau.nn.functional as fbF

    libs: dict[str, object] = {"flambeau": (flambeau, fbF)}
    try:
        import torch
        import torch.nn.functional as tF
    except ImportError:
        pass
    else:
        libs["torch"] = (torch, tF)
    return libs


# -- softmax and losses (helper nnloss) ---------------------------------------------------------------

def _logits_and_targets(lib, requires_grad: bool):
    torchlike, _ = lib
    rng = np.random.default_rng(0)
    x = torchlike.from_numpy(rng.standard_normal((ROWS, CLASSES)).astype(np.float32))
    t = torchlike.from_numpy(rng.integers(0, CLASSES, ROWS).astype(np.int64))
    if requires_grad:
        x.requires_grad_(True)
    return x, t


def log_softmax_nll(lib):
    x, t = _logits_and_targets(lib, True)
    F = lib[1]

    def run():
        x.grad = None
        F.nll_loss(F.log_softmax(x, 1), t).backward()
    return run


def log_softmax_nll_fwd(lib):
    x, t = _logits_and_targets(lib, False)
    F = lib[1]

    def run():
        F.nll_loss(F.log_softmax(x, 1), t)
    return run


def cross_entropy(lib):
    x, t = _logits_and_targets(lib, True)
    F = lib[1]

    def run():
        x.grad = None
        F.cross_entropy(x, t).backward()
    return run


def cross_entropy_fwd(lib):
    x, t = _logits_and_targets(lib, False)
    F = lib[1]

    def run():
        F.cross_entropy(x, t)
    return run


def softmax_fwd(lib):
    x, _ = _logits_and_targets(lib, False)
    F = lib[1]

    def run():
        F.softmax(x, 1)
    return run


CASES = {"log_softmax_nll": log_softmax_nll, "cross_entropy": cross_entropy, "softmax_fwd": softmax_fwd,
         "log_softmax_nll_fwd": log_softmax_nll_fwd, "cross_entropy_fwd": cross_entropy_fwd}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.3, help="seconds per timed block")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    libs = _libraries()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    rows: list[H.Row] = []
    for case in args.cases.split(","):
        workloads = {name: CASES[case](lib) for name, lib in libs.items()}
        results = H.interleave(workloads, args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    for name, (torchlike, _) in libs.items():
        print(f"{name} threads: {torchlike.get_num_threads()}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(H.format_rows(rows))
    by_case: dict[str, dict[str, float]] = {}
    for r in rows:
        by_case.setdefault(r.benchmark, {})[r.library] = r.value
    if all("torch" in v for v in by_case.values()):
        print(f"\nflambeau / torch time (bar <= {BAR}x):")
        for case, v in by_case.items():
            ratio = v["flambeau"] / v["torch"]
            print(f"  {case:<20} {ratio:5.2f}x  {'ok' if ratio <= BAR else 'OVER'}")


if __name__ == "__main__":
    main()

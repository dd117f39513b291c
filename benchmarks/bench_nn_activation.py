"""flambeau-nn's layers and functional ops against PyTorch, interleaved in one run.

Each helper's cases are in their own functions (``activation_workloads``...); ``main`` runs them all.

Activations and dropout, over a (4096, 1024) float32 input:
  gelu_fwd / gelu_tanh_fwd / silu_fwd / dropout_fwd     the forward pass alone
  gelu_fwdbwd / silu_fwdbwd / dropout_fwdbwd           forward and backward (``y.backward(g)``)

Usage: python benchmarks/bench_nn_activation.py [--rounds N] [--block S] [--threads T] [--only PREFIX]
(needs flambeau-nn and torch in one environment).
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np

import _harness as H

SHAPE = (4096, 1024)


def _functional(lib: H.Library) -> Any:
    if lib.name == "torch":
        import torch.nn.functional as F
    else:
        import flambeau.nn.functional as F
    return F


def _forward(lib: H.Library, call: Callable[[Any], Any]) -> Callable[[], Any]:
    x = lib.make(SHAPE)
    grad = lib.module.no_grad

    def run():
        with grad():
            return call(x)
    return run


def _forward_backward(lib: H.Library, call: Callable[[Any], Any]) -> Callable[[], Any]:
    x = lib.make(SHAPE).requires_grad_(True)
    g = lib.module.from_numpy(np.ones(SHAPE, np.float32))

    def run():
        x.grad = None
        call(x).backward(g)
    return run


def activation_workloads(libs: list[H.Library]) -> dict[str, dict[str, Callable[[], Any]]]:
    """gelu (both forms), silu and dropout: forward, and forward + backward."""
    cases: dict[str, dict[str, Callable[[], Any]]] = {}
    for lib in libs:
        F = _functional(lib)
        calls = {
            "gelu": F.gelu,
            "gelu_tanh": lambda x, F=F: F.gelu(x, approximate="tanh"),
            "silu": F.silu,
            "dropout": lambda x, F=F: F.dropout(x, 0.1),
        }
        for name, call in calls.items():
            cases.setdefault(f"{name}_fwd", {})[lib.name] = _forward(lib, call)
            if name != "gelu_tanh":
                cases.setdefault(f"{name}_fwdbwd", {})[lib.name] = _forward_backward(lib, call)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--only", default="", help="run only the cases whose name starts with this")
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    rows = []
    for case, workloads in activation_workloads(libs).items():
        if not case.startswith(args.only):
            continue
        results = H.interleave(workloads, args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s shape={SHAPE}")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

"""Autograd overhead against PyTorch, interleaved in one run (issue: core-autograd).

Cases (bars from the issue, flambeau / PyTorch):
  mul_rg      1-element ``a * b`` with ``a.requires_grad`` (forward + recording)   bar <= 1.5x
  chain_bwd   ``backward()`` of a 100-op elementwise chain on 1-element tensors    bar <= 1.5x
  mlp_bwd     ``backward()`` of ``(x @ w).relu().sum()`` at 1024x1024             bar <= 1.1x
              (flambeau has no ``relu`` op yet: ``clamp(min=0)``; only ``w`` requires grad)

Usage: python benchmarks/bench_autograd.py [--rounds N] [--threads N]   (needs torch installed for the comparison)
Each round times flambeau then PyTorch back to back; the table shows the median over rounds.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _per_call(fn, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def mul_rg(lib, number):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0])
    return _per_call(lambda: a * b, number)


def _chain(a):
    y = a
    for _ in range(50):  # 100 ops: a mul and an add each step
        y = y * 1.0001
        y = y + 0.5
    return y


def chain_bwd(lib, number):
    a = lib.tensor([1.0], requires_grad=True)
    total = 0.0
    for _ in range(number):
        y = _chain(a)
        start = time.perf_counter()
        y.backward()
        total += time.perf_counter() - start
    return total / number


_MLP_CACHE: dict = {}


def mlp_bwd(lib, number):
    key = lib.__name__
    if key not in _MLP_CACHE:
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
        w = lib.tensor(rng.standard_normal((1024, 1024)).astype(np.float32), requires_grad=True)
        _MLP_CACHE[key] = (x, w)
    x, w = _MLP_CACHE[key]
    relu = (lambda t: t.relu()) if key == "torch" else (lambda t: t.clamp(min=0))
    total = 0.0
    for _ in range(number):
        loss = relu(x @ w).sum()
        start = time.perf_counter()
        loss.backward()
        total += time.perf_counter() - start
        w.grad = None
    return total / number


CASES = {"mul_rg": (mul_rg, 20000, 1.5), "chain_bwd": (chain_bwd, 200, 1.5), "mlp_bwd": (mlp_bwd, 5, 1.1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--threads", type=int, default=2, help="threads for both libraries (kernels and BLAS)")
    args = parser.parse_args()
    import flambeau

    flambeau.set_num_threads(args.threads)  # OpenMP kernels and numpy's BLAS
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    print(f"{'case':<10} {'flambeau':>12} {'torch':>12} {'ratio':>7} {'bar':>5}")
    for name in args.cases.split(","):
        fn, number, bar = CASES[name]
        fb_times, th_times = [], []
        for _ in range(args.rounds):
            fb_times.append(fn(flambeau, number))
            if torch is not None:
                th_times.append(fn(torch, number))
        f = statistics.median(fb_times)
        t = statistics.median(th_times) if th_times else float("nan")
        print(f"{name:<10} {f * 1e6:>10.1f}us {t * 1e6:>10.1f}us {f / t:>6.2f}x {bar:>4}x")


if __name__ == "__main__":
    main()

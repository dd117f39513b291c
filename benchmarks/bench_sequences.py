"""Mixed sequences of ops at DEFAULT thread settings, flambeau vs PyTorch (issue 11: one thread pool).

Single-op benchmarks miss what training does: a matmul (BLAS) then elementwise ops and reductions
(the C++ kernels' OpenMP team) then another matmul, over and over. When BLAS and the kernels keep
two pools of threads that spin while idle, each op hands the cores to the other pool's spinner;
measured alone, every op looks fast. So these run at the libraries' defaults: no set_num_threads,
no environment variables (unset OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, GOMP_SPINCOUNT...).

Cases (bar: flambeau's time at most 1.2x PyTorch's; float32):
  mm_sum       ``x @ w`` (64x256 @ 256x512), then ``a.sum()`` on a (64, 512) tensor
  mm_relu_mm   ``y = (x @ w).clamp_min(0); s = y.sum(); z = y @ w2; (z * z).sum(0)`` (w2: 512x512)
  mm_ew_red_mm ``y = x @ w; e = y * 0.5 + 1; s = e.sum(1, keepdim=True); (e / s) @ w2``
  mlp_step     one training step of a 256-512-512-10 MLP on a batch of 64: forward (matmul, bias,
               clamp_min as ReLU), mean squared error, ``backward()``, ``SGD.step()``, ``zero_grad()``

Usage: python benchmarks/bench_sequences.py [--rounds N] [--block S] [--cases a,b]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
Libraries alternate block by block (``_harness.interleave``); the table shows medians over blocks.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

import _harness as H

BAR = 1.2

_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOMP_SPINCOUNT",
               "OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT")


def _libraries() -> dict[str, object]:
    """flambeau and (if installed) torch, as imported: no thread settings touched."""
    import flambeau
    import flambeau.optim  # noqa: F401  (mlp_step's SGD)

    libs: dict[str, object] = {"flambeau": flambeau}
    try:
        import torch
    except ImportError:
        pass
    else:
        libs["torch"] = torch
    return libs


def _tensor(lib, array: np.ndarray, requires_grad: bool = False):
    t = lib.from_numpy(array.copy())
    if requires_grad:
        t.requires_grad_(True)
    return t


def _data(lib, seed: int = 0) -> dict[str, object]:
    rng = np.random.default_rng(seed)

    def arr(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {"x": _tensor(lib, arr(64, 256)), "w": _tensor(lib, arr(256, 512, scale=0.06)),
            "w2": _tensor(lib, arr(512, 512, scale=0.04)), "a": _tensor(lib, arr(64, 512))}


def mm_sum(lib):
    d = _data(lib)
    x, w, a = d["x"], d["w"], d["a"]

    def run():
        x @ w
        a.sum()
    return run


def mm_relu_mm(lib):
    d = _data(lib)
    x, w, w2 = d["x"], d["w"], d["w2"]

    def run():
        y = (x @ w).clamp_min(0)
        y.sum()
        z = y @ w2
        (z * z).sum(0)
    return run


def mm_ew_red_mm(lib):
    d = _data(lib)
    x, w, w2 = d["x"], d["w"], d["w2"]

    def run():
        y = x @ w
        e = y * 0.5 + 1
        s = e.sum(1, keepdim=True)
        (e / s) @ w2
    return run


def mlp_step(lib):
    rng = np.random.default_rng(1)
    sizes = (256, 512, 512, 10)
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(_tensor(lib, rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32), True))
        params.append(_tensor(lib, rng.uniform(-bound, bound, (fan_out,)).astype(np.float32), True))
    x = _tensor(lib, rng.standard_normal((64, 256)).astype(np.float32))
    target = _tensor(lib, rng.standard_normal((64, 10)).astype(np.float32))
    opt = lib.optim.SGD(params, lr=0.01)

    def run():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = h.clamp_min(0)
        loss = ((h - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return run


CASES = {"mm_sum": mm_sum, "mm_relu_mm": mm_relu_mm, "mm_ew_red_mm": mm_ew_red_mm, "mlp_step": mlp_step}


def _setting_lines(libs: dict[str, object]) -> list[str]:
    lines = [f"{name} threads: {lib.get_num_threads()}" for name, lib in libs.items()]
    set_env = [f"{k}={os.environ[k]}" for k in _THREAD_ENV if k in os.environ]
    lines.append("thread environment: " + (" ".join(set_env) if set_env else "none set (defaults)"))
    lines += H.blas_info()
    return lines


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
    for line in _setting_lines(libs):
        print(line)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(H.format_rows(rows))
    by_case: dict[str, dict[str, float]] = {}
    for r in rows:
        by_case.setdefault(r.benchmark, {})[r.library] = r.value
    if all("torch" in v for v in by_case.values()):
        print(f"\nflambeau / torch time (bar <= {BAR}x):")
        for case, v in by_case.items():
            ratio = v["flambeau"] / v["torch"]
            print(f"  {case:<14} {ratio:5.2f}x  {'ok' if ratio <= BAR else 'OVER'}")


if __name__ == "__main__":
    main()

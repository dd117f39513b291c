"""The CUDA backend against PyTorch-CUDA, interleaved in one run (issue 17). Needs a GPU.

Cases (bars from the issue, flambeau / PyTorch):
  matmul_fp32   8192x8192 @ 8192x8192 float32, TF32 off            throughput >= 0.8x
  matmul_tf32   the same with TF32 (CUPY_TF32=1 / allow_tf32)       throughput >= 0.8x
  matmul_bf16   the same in bfloat16                                throughput >= 0.8x
  add_256m      a + b over 256M float32                             bandwidth >= 0.9x
  sum_256m      a.sum() over 256M float32                           bandwidth >= 0.9x
  adam_100m     Adam.step() over 100M float32 parameters (10 x 10M)  time <= 1.0x
  add_1         1-element a + b: the launch overhead                (reported)
  mlp_step      784-512-512-10 MLP, batch 256, fwd+bwd+SGD step     time <= 1.2x

Usage: cd benchmarks && python bench_cuda.py [--rounds N] [--only CASE,...] [--json FILE]
Each round times flambeau then PyTorch back to back (CUDA events around the work, synchronised);
the table shows the median per call over rounds. TF32 is a process-wide CuPy setting read at import,
so matmul_tf32 runs in a child process with CUPY_TF32=1.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

GIB = 1024 ** 3


def _timer(sync):
    def timed(fn, number):
        fn()  # warm-up (kernel compilation, allocator)
        sync()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        return (time.perf_counter() - start) / number
    return timed


def _libs():
    import flambeau as fb
    import flambeau.cuda

    try:
        import torch
    except ImportError:
        torch = None
    return fb, torch


def case_matmul(dtype_name, tf32=False):
    def run(fb, torch, rounds):
        n = 8192
        fdt = getattr(fb, dtype_name)
        a, b = fb.randn(n, n, device="cuda").to(fdt), fb.randn(n, n, device="cuda").to(fdt)
        out = {"flambeau": [], "torch": []}
        timed_fb = _timer(flambeau_sync(fb))
        if torch is not None:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            tdt = getattr(torch, dtype_name)
            ta, tb = torch.randn(n, n, device="cuda", dtype=tdt), torch.randn(n, n, device="cuda", dtype=tdt)
            timed_t = _timer(torch.cuda.synchronize)
        for _ in range(rounds):
            out["flambeau"].append(timed_fb(lambda: a @ b, 5))
            if torch is not None:
                out["torch"].append(timed_t(lambda: ta @ tb, 5))
        flops = 2 * n ** 3
        return out, lambda t: f"{flops / t / 1e12:.0f} TFLOP/s", "higher"
    return run


def flambeau_sync(fb):
    return fb.cuda.synchronize


def case_add(fb, torch, rounds):
    n = 256 * 1024 * 1024
    a, b = fb.ones(n, device="cuda"), fb.ones(n, device="cuda")
    out = {"flambeau": [], "torch": []}
    if torch is not None:
        ta, tb = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
    for _ in range(rounds):
        out["flambeau"].append(_timer(fb.cuda.synchronize)(lambda: a + b, 10))
        if torch is not None:
            out["torch"].append(_timer(torch.cuda.synchronize)(lambda: ta + tb, 10))
    return out, lambda t: f"{3 * 4 * n / t / 1e9:.0f} GB/s", "higher"


def case_sum(fb, torch, rounds):
    n = 256 * 1024 * 1024
    a = fb.ones(n, device="cuda")
    out = {"flambeau": [], "torch": []}
    if torch is not None:
        ta = torch.ones(n, device="cuda")
    for _ in range(rounds):
        out["flambeau"].append(_timer(fb.cuda.synchronize)(lambda: a.sum(), 10))
        if torch is not None:
            out["torch"].append(_timer(torch.cuda.synchronize)(lambda: ta.sum(), 10))
    return out, lambda t: f"{4 * n / t / 1e9:.0f} GB/s", "higher"


def case_adam(fb, torch, rounds):
    import flambeau.optim as foptim

    shapes = [(10 * 1024 * 1024,)] * 10  # 100M parameters in ten tensors, as a model has several
    params = [fb.zeros(s, device="cuda", requires_grad=True) for s in shapes]
    for p in params:
        p.grad = fb.ones(p.shape, device="cuda")
    opt = foptim.Adam(params, lr=1e-3)
    out = {"flambeau": [], "torch": []}
    if torch is not None:
        tparams = [torch.zeros(s, device="cuda", requires_grad=True) for s in shapes]
        for p in tparams:
            p.grad = torch.ones_like(p)
        topt = torch.optim.Adam(tparams, lr=1e-3)  # PyTorch's default on CUDA: foreach
    for _ in range(rounds):
        out["flambeau"].append(_timer(fb.cuda.synchronize)(opt.step, 3))
        if torch is not None:
            out["torch"].append(_timer(torch.cuda.synchronize)(topt.step, 3))
    return out, lambda t: f"{t * 1e3:.2f} ms", "lower"


def case_add_1(fb, torch, rounds):
    a, b = fb.ones(1, device="cuda"), fb.ones(1, device="cuda")
    out = {"flambeau": [], "torch": []}
    if torch is not None:
        ta, tb = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
    for _ in range(rounds):
        out["flambeau"].append(_timer(fb.cuda.synchronize)(lambda: a + b, 2000))
        if torch is not None:
            out["torch"].append(_timer(torch.cuda.synchronize)(lambda: ta + tb, 2000))
    return out, lambda t: f"{t * 1e6:.1f} us", "lower"


def case_mlp(fb, torch, rounds):
    import flambeau.nn as fnn
    import flambeau.optim as foptim

    def build(lib, nn, optim):
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        model = model.to("cuda")
        opt = optim.SGD(model.parameters(), lr=0.01)
        x = lib.randn(256, 784, device="cuda")
        y = lib.randint(0, 10, (256,), device="cuda")
        loss_fn = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
        return step

    step_fb = build(fb, fnn, foptim)
    out = {"flambeau": [], "torch": []}
    if torch is not None:
        step_t = build(torch, torch.nn, torch.optim)
    for _ in range(rounds):
        out["flambeau"].append(_timer(fb.cuda.synchronize)(step_fb, 20))
        if torch is not None:
            out["torch"].append(_timer(torch.cuda.synchronize)(step_t, 20))
    return out, lambda t: f"{t * 1e3:.2f} ms", "lower"


CASES = {
    "matmul_fp32": case_matmul("float32"),
    "matmul_tf32": case_matmul("float32", tf32=True),
    "matmul_bf16": case_matmul("bfloat16"),
    "add_256m": case_add,
    "sum_256m": case_sum,
    "adam_100m": case_adam,
    "add_1": case_add_1,
    "mlp_step": case_mlp,
}


def run_case(name, rounds):
    fb, torch = _libs()
    t0 = time.perf_counter()
    try:
        times, fmt, better = CASES[name](fb, torch, rounds)
    except Exception as exc:  # noqa: BLE001 - one failing case must not hide the others' figures
        return {"case": name, "error": f"{type(exc).__name__}: {exc}"[:2000]}
    row = {"case": name, "seconds": round(time.perf_counter() - t0, 1)}
    for lib in ("flambeau", "torch"):
        if times[lib]:
            med = statistics.median(times[lib])
            row[lib] = {"median_s": med, "shown": fmt(med)}
    if "torch" in row:
        ratio = row["flambeau"]["median_s"] / row["torch"]["median_s"]
        row["time_ratio"] = round(ratio, 3)  # flambeau / torch time: < 1 is faster
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--json", default="")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_case(args.child, args.rounds)))
        return
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    rows = []
    for name in names:
        env = dict(os.environ)
        if name == "matmul_tf32":
            env["CUPY_TF32"] = "1"
        else:
            env.pop("CUPY_TF32", None)
        # each case in its own process: TF32 is per process, and a failure or leak stays in its case
        proc = subprocess.run([sys.executable, __file__, "--child", name, "--rounds", str(args.rounds)],
                              capture_output=True, text=True, env=env, timeout=240)
        try:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"case": name, "error": f"exit {proc.returncode}: {proc.stderr[-2000:]}"}
        rows.append(row)
        shown = {lib: row[lib]["shown"] for lib in ("flambeau", "torch") if lib in row}
        print(f"{name:12s} {shown.get('flambeau', '-'):>14s} {shown.get('torch', '-'):>14s} "
              f"time ratio {row.get('time_ratio', '-')}" + (f"  ERROR {row['error'][:300]}" if "error" in row else ""),
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

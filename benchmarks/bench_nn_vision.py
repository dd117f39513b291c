"""Padding and vision layers, flambeau vs PyTorch, interleaved in one run (issue 15).

Cases (float32, default thread settings):
  reflect_pad        ``F.pad(x, (3, 3, 3, 3), "reflect")`` of x (8, 64, 64, 64)
  reflect_pad_bwd    its backward (``F.pad(...).backward(g)``)
  upsample_bilinear  ``F.interpolate(x, scale_factor=2, mode="bilinear")`` of x (8, 64, 64, 64)
  upsample_bil_bwd   its backward
  upsample_nearest   ``F.interpolate(x, scale_factor=2)`` of x (8, 64, 64, 64)
  grid_sample        ``F.grid_sample(x, grid)`` of x (8, 16, 64, 64) on a (8, 64, 64, 2) grid (bilinear, zeros)

Both libraries get the same data. Usage:
python benchmarks/bench_nn_vision.py [--rounds N] [--block S] [--threads T] [--only NAME,...]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H

SHAPE = (8, 64, 64, 64)


def _cases(mod, F):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(SHAPE).astype(np.float32)
    x = mod.from_numpy(x_np)
    xg = mod.from_numpy(x_np.copy()).requires_grad_()
    g_pad = mod.from_numpy(rng.standard_normal((8, 64, 70, 70)).astype(np.float32))
    g_up = mod.from_numpy(rng.standard_normal((8, 64, 128, 128)).astype(np.float32))
    xs = mod.from_numpy(rng.standard_normal((8, 16, 64, 64)).astype(np.float32))
    grid = mod.from_numpy(rng.uniform(-1.1, 1.1, (8, 64, 64, 2)).astype(np.float32))

    def pad_bwd():
        xg.grad = None
        F.pad(xg, (3, 3, 3, 3), "reflect").backward(g_pad)

    def up_bwd():
        xg.grad = None
        F.interpolate(xg, scale_factor=2, mode="bilinear").backward(g_up)

    return {
        "reflect_pad": lambda: F.pad(x, (3, 3, 3, 3), "reflect"),
        "reflect_pad_bwd": pad_bwd,
        "upsample_bilinear": lambda: F.interpolate(x, scale_factor=2, mode="bilinear"),
        "upsample_bil_bwd": up_bwd,
        "upsample_nearest": lambda: F.interpolate(x, scale_factor=2),
        "grid_sample": lambda: F.grid_sample(xs, grid, align_corners=False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    per_lib = {}
    for lib in libs:
        if lib.name == "torch":
            import torch.nn.functional as F
        else:
            import flambeau.nn.functional as F
        per_lib[lib.name] = _cases(lib.module, F)
    names = [n for n in next(iter(per_lib.values())) if not args.only or n in args.only.split(",")]
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    for name in names:
        results = H.interleave({lib: cases[name] for lib, cases in per_lib.items()}, args.rounds, args.block)
        print(H.format_rows(H.rows_from(name, results, "ms", lambda t: t * 1e3, higher_is_better=False)))


if __name__ == "__main__":
    main()

"""Attention and a transformer layer, flambeau vs PyTorch, interleaved in one run.

Cases (float32, default thread settings):
  sdpa_fwd        F.scaled_dot_product_attention on (8, 8, 256, 64) query, key and value.
  sdpa_fwd_bwd    the same, then backward of the output's sum to all three inputs.
  encoder_step    nn.TransformerEncoderLayer(256, 8) (dim_feedforward 2048, dropout 0.1, training),
                  input (32, 64, 256) sequence-first, forward, sum, backward, SGD step.

Usage: python benchmarks/bench_nn_transformer.py [--rounds N] [--block S] [--threads T]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H

SDPA_SHAPE = (8, 8, 256, 64)
SEQ, BATCH, D_MODEL, HEADS = 32, 64, 256, 8


def _sdpa(mod, F, backward):
    rng = np.random.default_rng(0)
    q, k, v = (mod.from_numpy(rng.standard_normal(SDPA_SHAPE).astype(np.float32)) for _ in range(3))
    if backward:
        for x in (q, k, v):
            x.requires_grad_(True)

    def run():
        out = F.scaled_dot_product_attention(q, k, v)
        if backward:
            out.sum().backward()
            q.grad = k.grad = v.grad = None
        return out

    return run


def _encoder_step(mod, nn, optim):
    mod.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS)
    rng = np.random.default_rng(0)
    with mod.no_grad():  # the same weights in both libraries
        for p in layer.parameters():
            p.copy_(mod.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.05).astype(np.float32)))
    opt = optim.SGD(layer.parameters(), lr=0.01)
    x = mod.from_numpy(rng.standard_normal((SEQ, BATCH, D_MODEL)).astype(np.float32))

    def run():
        opt.zero_grad()
        out = layer(x)
        out.sum().backward()
        opt.step()
        return out

    return run


def workloads(libs, case):
    out = {}
    for lib in libs:
        mod = lib.module
        if lib.name == "torch":
            import torch.nn as nn
            import torch.nn.functional as F
            import torch.optim as optim
        else:
            import flambeau.nn as nn
            import flambeau.nn.functional as F
            import flambeau.optim as optim
        if case == "encoder_step":
            out[lib.name] = _encoder_step(mod, nn, optim)
        else:
            out[lib.name] = _sdpa(mod, F, backward=case == "sdpa_fwd_bwd")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--cases", default="sdpa_fwd,sdpa_fwd_bwd,encoder_step")
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    rows = []
    for case in args.cases.split(","):
        results = H.interleave(workloads(libs, case), args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

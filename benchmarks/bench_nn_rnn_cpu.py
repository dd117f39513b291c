"""Recurrent layers, flambeau vs PyTorch: CPU time of the calling thread, one thread each.

On a loaded machine wall-clock blocks (bench_nn_rnn.py) swing by a factor of two from one block to the
next; the calling thread's CPU time (``time.thread_time``) with one thread per library counts only
the work done, so the ratio stays readable. Cases as bench_nn_rnn.py's (LSTM/GRU/RNN(64, 128),
sequence 32, batch 32, float32); each figure is the minimum and the median of ``--calls`` calls,
the libraries alternating call by call. With ``--threads 2`` the figures are wall-clock minima instead
(CPU time of one thread says nothing then). Usage:
python benchmarks/bench_nn_rnn_cpu.py [--calls N] [--threads T]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE; needs torch).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

INPUT, HIDDEN, STEPS, BATCH = 64, 128, 32, 32


def _case(mod, nn, kind: str, backward: bool):
    rng = np.random.default_rng(0)
    layer = getattr(nn, kind)(INPUT, HIDDEN)
    bound = 1.0 / np.sqrt(HIDDEN)
    with mod.no_grad():
        for p in layer.parameters():
            p.copy_(mod.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
    x = mod.from_numpy(rng.standard_normal((STEPS, BATCH, INPUT)).astype(np.float32))

    def fwd():
        with mod.no_grad():
            return layer(x)[0]

    def fwd_bwd():
        layer.zero_grad()
        out, hidden = layer(x)
        h = hidden[0] if isinstance(hidden, tuple) else hidden
        (out.sum() + h.sum()).backward()

    return fwd_bwd if backward else fwd


CASES = {"lstm_fwd": ("LSTM", False), "lstm_fwd_bwd": ("LSTM", True), "gru_fwd": ("GRU", False),
         "gru_fwd_bwd": ("GRU", True), "rnn_fwd_bwd": ("RNN", True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per library; above 1 the figures are wall-clock (perf_counter) minima")
    args = parser.parse_args()
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    import torch
    import flambeau as fb
    import flambeau.nn as fnn

    torch.set_num_threads(args.threads)
    fb.set_num_threads(args.threads)
    print(f"{'case':14} {'flambeau min/median ms':>24} {'torch min/median ms':>22} {'flambeau/torch (min)':>22}")
    for name, (kind, backward) in CASES.items():
        fns = {"flambeau": _case(fb, fnn, kind, backward), "torch": _case(torch, torch.nn, kind, backward)}
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(3):
            for fn in fns.values():
                fn()
        for _ in range(args.calls):
            for lib, fn in fns.items():
                t = clock()
                fn()
                times[lib].append(clock() - t)
        f, t_ = (np.array(times[k]) * 1e3 for k in ("flambeau", "torch"))
        print(f"{name:14} {f.min():11.2f} / {np.median(f):8.2f} {t_.min():10.2f} / {np.median(t_):8.2f} "
              f"{f.min() / t_.min():18.2f}x")


if __name__ == "__main__":
    main()

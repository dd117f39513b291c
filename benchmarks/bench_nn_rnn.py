"""Recurrent layers, flambeau vs PyTorch, interleaved in one run (issue 15's LSTM bar).

Cases (bar for lstm_fwd_bwd: flambeau's time at most 1.0x PyTorch's, default thread settings):
  lstm_fwd       ``nn.LSTM(64, 128)`` forward over a sequence of 32 steps, batch 32, no grad
  lstm_fwd_bwd   the same with grad: forward, ``output.sum() + h_n.sum()``, ``backward``
  gru_fwd        ``nn.GRU(64, 128)``, as lstm_fwd
  gru_fwd_bwd    ``nn.GRU(64, 128)``, as lstm_fwd_bwd
  rnn_fwd_bwd    ``nn.RNN(64, 128)`` (tanh), as lstm_fwd_bwd

Both libraries start from the same weights and data (float32). Usage:
python benchmarks/bench_nn_rnn.py [--rounds N] [--block S] [--threads T] [--only NAME]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H

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
        loss = out.sum() + h.sum()
        loss.backward()
        return loss

    return fwd_bwd if backward else fwd


CASES = {"lstm_fwd": ("LSTM", False), "lstm_fwd_bwd": ("LSTM", True), "gru_fwd": ("GRU", False),
         "gru_fwd_bwd": ("GRU", True), "rnn_fwd_bwd": ("RNN", True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--only", default=None, help="run only this case")
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    rows = []
    for name, (kind, backward) in CASES.items():
        if args.only and name != args.only:
            continue
        work = {}
        for lib in libs:
            if lib.name == "torch":
                import torch.nn as nn
            else:
                import flambeau.nn as nn
            work[lib.name] = _case(lib.module, nn, kind, backward)
        results = H.interleave(work, args.rounds, args.block)
        rows += H.rows_from(name, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

"""``flambeau train``'s epoch against the same loop with PyTorch, interleaved in one run (issue 14).

Both libraries run ``flambeau.cli._train.run_epoch`` (written with PyTorch's API only) over the
bundled digits' training split (1,438 images of 8x8), with the defaults of ``flambeau train``: an
MLP 64-128-10, Adam at lr 1e-3, batch 32, shuffled by a DataLoader (each library's own), the same
initial weights. One timed call is one epoch (45 steps). Bar: flambeau's time at most 1.0x PyTorch's.

Usage: python benchmarks/bench_train.py [--rounds N] [--threads T]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import _harness as H


def _epoch_fn(lib, split, hidden: int, batch: int, lr: float):
    from flambeau.cli._train import _relu, run_epoch

    mod = lib.module
    if lib.name == "torch":
        from torch.utils.data import DataLoader, TensorDataset
    else:
        from flambeau.utils.data import DataLoader, TensorDataset
    import flambeau.nn  # noqa: F401  (fb.nn and fb.optim on the module)
    import flambeau.optim  # noqa: F401

    nn, F = mod.nn, mod.nn.functional
    x = mod.from_numpy(split.train_x.reshape(len(split.train_x), -1).copy())
    y = mod.from_numpy(split.train_y.copy())
    model = nn.Sequential(nn.Linear(x.shape[1], hidden), _relu(nn), nn.Linear(hidden, split.num_classes))
    rng = np.random.default_rng(0)
    with mod.no_grad():  # the same initial weights in both
        for p in model.parameters():
            p.copy_(mod.from_numpy((rng.random(tuple(p.shape), dtype=np.float32) - 0.5) * 0.2))
    optimizer = mod.optim.Adam(model.parameters(), lr=lr)
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=True, generator=mod.Generator().manual_seed(0))

    def epoch():
        return run_epoch(model, optimizer, loader, F.cross_entropy)

    return epoch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs-per-block", type=int, default=3)
    parser.add_argument("--threads", type=int, default=H.THREADS)
    args = parser.parse_args()
    H.THREADS = args.threads
    from flambeau.cli._datasets import digits
    from flambeau.cli._train import Options

    opts = Options()
    split = digits()
    libs = H.load_libraries(("flambeau", "torch"))
    fns = {lib.name: _epoch_fn(lib, split, opts.hidden, opts.batch_size, opts.lr) for lib in libs}
    for fn in fns.values():
        fn()  # warm up
    results = {name: H.Result(name) for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            results[name].times.append(H.time_block(fn, args.epochs_per_block))
            time.sleep(H.SWITCH_SLEEP)
    rows = H.rows_from("train_epoch_digits_mlp", results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} epochs/block={args.epochs_per_block}")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

"""A DataLoader epoch against PyTorch's, interleaved in one run (issue 14).

Rows: flambeau (a TensorDataset's batch is gathered at once), "fb per-sample" (flambeau with a
collate_fn of the user's own: each sample indexed, then stacked, PyTorch's way), torch.

Case: 60,000 float32 images of 28x28 with int64 labels in a TensorDataset, one epoch at batch 128
with shuffling (469 batches), with ``num_workers`` 0 and 2 (bar: flambeau's time at most 1.2x
PyTorch's). Each timed call is one full epoch, worker start-up included (non-persistent workers,
as both libraries default to); the batches are only touched, not used.

Usage: python benchmarks/bench_data.py [--rounds N] [--workers 0,2]
(needs torch in the same environment for the comparison).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import _harness as H

N, SIDE, BATCH = 60_000, 28, 128


def _epoch_fn(lib, images: np.ndarray, labels: np.ndarray, workers: int, per_sample: bool = False):
    mod = lib.module
    if lib.name == "torch":
        from torch.utils.data import DataLoader, TensorDataset
    else:
        from flambeau.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(mod.from_numpy(images), mod.from_numpy(labels))
    gen = mod.Generator().manual_seed(0)
    # per_sample: a collate_fn of the user's own, so that flambeau indexes each sample and stacks
    # them, as PyTorch does, instead of gathering a TensorDataset's batch at once
    extra = {"collate_fn": _collate_each} if per_sample else {}
    loader = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers, generator=gen, **extra)

    def epoch():
        n = 0
        for _x, y in loader:
            n += y.shape[0]
        assert n == N

    return epoch


def _collate_each(batch):
    from flambeau.utils.data import default_collate

    return default_collate(batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", default="0,2", help="comma-separated num_workers values")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    rng = np.random.default_rng(0)
    images = rng.random((N, SIDE, SIDE), dtype=np.float32)
    labels = rng.integers(0, 10, N).astype(np.int64)
    rows = []
    for workers in (int(w) for w in args.workers.split(",")):
        fns = {lib.name: _epoch_fn(lib, images, labels, workers) for lib in libs}
        fb_lib = next(lib for lib in libs if lib.name == "flambeau")
        fns["fb per-sample"] = _epoch_fn(fb_lib, images, labels, workers, per_sample=True)
        # one epoch per block: an epoch is long enough to time on its own
        results = {name: H.Result(name) for name in fns}
        for fn in fns.values():
            fn()  # warm up
        for _ in range(args.rounds):
            for name, fn in fns.items():
                results[name].times.append(H.time_block(fn, 1))
                time.sleep(H.SWITCH_SLEEP)
        rows += H.rows_from(f"epoch_60k_b128_w{workers}", results, "s", lambda t: t, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds}")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()

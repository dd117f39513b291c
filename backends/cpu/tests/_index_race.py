"""One index op run while another thread flips an entry of its index in and out of range.

Run as ``python _index_race.py SECONDS OP [OP ...]``: exits 0 when every call either returned a result
consistent with some in-range index or raised the op's out-of-range error; a kernel that checks an
index in one pass and trusts it in another reads or writes out of bounds and crashes the process
(the repro of issue 11: 3 of 3 runs crashed within 15 s). Kept out of pytest's process so that a
crash fails one test instead of killing the run.
"""
from __future__ import annotations

import sys
import threading
import time

import flambeau as fb

N = 1 << 20  # elements of the index; large enough that the kernels release the GIL and use threads
BAD = 2 ** 40


def _ops(idx: fb.Tensor):
    """op name -> a call using ``idx`` (int64, length N, every entry 0 unless being flipped)."""
    src1 = fb.arange(4.0)
    rows = fb.ones(4, 8)
    idx2 = idx.view(N // 8, 8)
    big = fb.zeros(N // 8, 8)
    return {
        "gather": lambda: fb.gather(src1, 0, idx),
        "gather_dim1": lambda: fb.gather(big, 1, idx2),
        "gather_out": lambda: fb.gather(src1, 0, idx, out=fb.empty(N)),
        "scatter": lambda: fb.zeros(4).scatter(0, idx, fb.ones(N)),
        "scatter_": lambda: fb.zeros(4).scatter_(0, idx, fb.ones(N)),
        "scatter_add": lambda: fb.zeros(4).scatter_add(0, idx, fb.ones(N)),
        "scatter_add_": lambda: fb.zeros(4).scatter_add_(0, idx, fb.ones(N)),
        "scatter_add_dim1": lambda: fb.zeros(N // 8, 8).scatter_add(1, idx2, fb.ones(N // 8, 8)),
        "scatter_reduce": lambda: fb.zeros(4).scatter_reduce(0, idx, fb.ones(N), "amax"),
        "index_select": lambda: fb.index_select(rows, 0, idx),
        "index_select_1d": lambda: fb.index_select(src1, 0, idx),
        "index_add": lambda: fb.zeros(4).index_add(0, idx, fb.ones(N)),
        "index_add_": lambda: fb.zeros(4).index_add_(0, idx, fb.ones(N)),
        "index_copy": lambda: fb.zeros(4).index_copy(0, idx, fb.ones(N)),
        "index_copy_": lambda: fb.zeros(4).index_copy_(0, idx, fb.ones(N)),
        "index_fill": lambda: fb.zeros(4).index_fill(0, idx, 1.0),
        "index_reduce": lambda: fb.zeros(4).index_reduce(0, idx, fb.ones(N), "amax"),
        "take": lambda: fb.take(src1, idx),
        "take_along_dim": lambda: fb.take_along_dim(src1, idx),
        "index": lambda: src1[idx],
        "index_2d": lambda: rows[idx],
        "index_put": lambda: fb.zeros(4).index_put((idx,), fb.tensor(1.0)),
        "index_put_": lambda: fb.zeros(4).index_put_((idx,), fb.tensor(1.0), accumulate=True),
        "setitem": lambda: fb.zeros(4).__setitem__(idx, 1.0),
        "bincount": lambda: fb.bincount(idx),  # values, not indices, but they address the result the same way
    }


def race(op: str, seconds: float) -> None:
    print(f"{op}: started", flush=True)  # the last line printed names the op that crashed
    idx = fb.zeros(N, dtype=fb.int64)
    call = _ops(idx)[op]
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            idx[N - 1] = BAD
            idx[N - 1] = 0

    flipper = threading.Thread(target=flip)
    flipper.start()
    calls = errors = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            calls += 1
            try:
                call()
            except (IndexError, RuntimeError) as exc:
                if not any(word in str(exc) for word in (str(BAD), "out of range", "bincount", "allocate")):
                    raise
                errors += 1
    finally:
        stop.set()
        flipper.join()
    print(f"{op}: {calls} calls, {errors} raised", flush=True)


if __name__ == "__main__":
    for name in sys.argv[2:]:
        race(name, float(sys.argv[1]))

"""Rank 1 dies (``kill``: SIGKILL) or stalls (``stop``: SIGSTOP, a rank that is there but never answers)
before a collective; the job must end, never hang.

A killed rank: MPI's process manager ends the job at once. A stalled rank: the others raise
DistBackendError when the group's timeout passes (printed as ``rank R: clear error: ...``), exit 3,
and under the launcher their failure ends the job.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta

import flambeau as fb
import flambeau.distributed as dist


def main() -> int:
    mode = sys.argv[1]
    dist.init_process_group(timeout=timedelta(seconds=float(os.environ.get("JOB_TIMEOUT", "5"))))
    rank = dist.get_rank()
    dist.barrier()
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
    began = time.monotonic()
    try:
        dist.all_reduce(fb.ones(1000))
    except dist.DistBackendError as e:
        print(f"rank {rank}: clear error after {time.monotonic() - began:.1f} s: {e}", flush=True)
        return 3
    print(f"rank {rank}: no error", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

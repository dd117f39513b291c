"""glibc's malloc tuned so that freed tensor buffers are reused instead of handed back to the OS.

glibc's default (a dynamic mmap threshold, and a heap trimmed once 2x that threshold lies free at
its top) returns a few-MB buffer to the OS when the op that made it frees it, and the next op's
buffer of the same size is faulted in again page by page. An op that makes temporaries (a
decomposition, a composite: ``var`` makes three 1M-element ones) then spends most of its time in
page faults: 1M float32, one thread, CPU time: the decomposed ``sigmoid`` took 8.4 ms with the
defaults against 1.9 ms with the settings below, which the process keeps from then on (the cost:
up to ``TRIM`` bytes of freed heap stay mapped). PyTorch's users get the same effect from jemalloc
or tcmalloc; numpy's allocations go through malloc, so this is the one place to set it.

Skipped when the user set any ``MALLOC_*`` variable or a ``glibc.malloc`` tunable (their choice wins), off with
``FLAMBEAU_TUNE_MALLOC=0``, and a no-op where the C library is not glibc.
"""
from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: buffers up to this size come from the heap (glibc's largest allowed on 64-bit)
MMAP = 32 << 20
#: free bytes at the heap's top kept before trimming
TRIM = 256 << 20

_done: list[bool] = []


def tune() -> bool:
    """Applies the settings once per process; True when they were applied."""
    if _done:
        return _done[0]
    _done.append(False)
    if not sys.platform.startswith("linux") or os.environ.get("FLAMBEAU_TUNE_MALLOC", "1") == "0":
        return False
    if any(k.startswith("MALLOC_") for k in os.environ) or "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        _ = libc.gnu_get_libc_version  # glibc only: musl's mallopt ignores these
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = bool(mallopt(M_MMAP_THRESHOLD, MMAP)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM))
    _done[0] = ok
    return ok

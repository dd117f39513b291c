"""One pool of threads for the backend: the C++ kernels' OpenMP team, which BLAS runs on too.

numpy and scipy each bundle an OpenBLAS with a pthreads pool of its own, whose idle workers spin for
about 0.1 s after each threaded call; the kernels' libgomp workers spin for a while after each
parallel region. Two pools spinning on the same cores made a matmul followed by a reduction 40x
slower than either alone on a 2-core machine (docs/performance.md, "One thread pool"). So every
OpenBLAS found in the process is handed a callback (``_C.share_blas_pools``, OpenBLAS >= 0.3.28)
that runs its parallel jobs on the OpenMP team; its own workers then stay parked.

``flambeau.set_num_threads`` sets the team's size and, as in PyTorch, the thread count of the BLAS
libraries (numpy's and scipy's OpenBLAS, MKL where the ``mkl`` extra is in use) and of the OpenMP
runtimes that MKL may bring (Intel's libiomp). OpenBLAS decides how many jobs a call splits into
from its own count, so the two must agree. Libraries loaded later (scipy's OpenBLAS at the first
small fused product or linalg call, MKL with ``mkl_fft``) are picked up by :func:`share_new_pools`.
threadpoolctl is imported at the first call that needs it, not at ``import flambeau``.

One routine does not fit: OpenBLAS's parallel LU (getrf, behind det, slogdet, inv, solve, lu_factor)
hands part of its jobs to its own pool (exec_blas_async, which the callback does not cover) and the
rest to the callback, and the jobs wait for each other. With both pools awake on 2 cores each wait
lasts until the scheduler rotates: a 128x128 inverse took 21 ms instead of 0.7 ms on one thread, a
400x400 one 48 ms (PyTorch: 4.5 ms). :func:`one_blas_thread` runs such calls on one thread. A user's
own numpy or scipy LU still wakes OpenBLAS's workers, which then spun for ~0.1 s and took a core from
whatever ran next; ``_C.share_blas_pools`` therefore also has each library it shares let its workers
sleep at once (OPENBLAS_THREAD_TIMEOUT=4, read again for that library only; a timeout the user set
stays).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Any, Iterator

#: The count last asked for by ``set_blas_threads``; None while the libraries keep their defaults.
_requested: int | None = None

#: The OpenBLAS libraries (by path) whose jobs run on the OpenMP team.
shared: list[str] = []


def _native() -> Any:
    try:
        from . import _C
    except ImportError:  # pragma: no cover - the numpy-only fallback has no OpenMP team to share
        return None
    return _C


def share_new_pools() -> None:
    """Hand every OpenBLAS loaded since the last call the OpenMP team, and apply the requested count.

    Cheap when nothing new was loaded (one walk over the loaded libraries' names, ~50 us)."""
    native = _native()
    if native is not None:
        added = native.share_blas_pools()
        shared.extend(added)
    reapply()


def set_blas_threads(n: int) -> None:
    """Limit every BLAS library loaded now (and, through :func:`reapply`, later) to ``n`` threads."""
    global _requested
    # after any LU call of another thread (one_blas_thread), whose exit would otherwise put its own
    # saved count back over this one
    with _lapack_lock:
        _requested = n
        share_new_pools()


def _ours(info: dict[str, Any]) -> bool:
    """Whether threadpoolctl's entry is a pool flambeau's kernels use: any BLAS, and the OpenMP
    runtimes other than a foreign libgomp (PyTorch bundles its own copy, which torch.set_num_threads
    governs; the kernels' own libgomp is set directly by ``_C.set_num_threads``)."""
    if info["user_api"] == "blas":
        return True
    return info["internal_api"] == "openmp" and "libgomp" not in info.get("prefix", "")


def reapply() -> None:
    """Apply the requested count to the libraries loaded since it was set; no-op if none was."""
    if _requested is None:
        return
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    # Not threadpool_limits as a context manager: the limit stays after the call, as set_num_threads means.
    for lib in controller.lib_controllers:
        if not _ours(lib.info()):
            continue
        # OpenBLAS through its own functions: threadpoolctl (3.6+) lets only the first Python thread
        # that set an OpenBLAS count set it again and silently ignores the others, so
        # fb.set_num_threads from a second thread left OpenBLAS's count apart from the team's.
        fns = _count_functions(lib.filepath) if lib.internal_api == "openblas" else None
        if fns is not None:
            if fns[0]() != _requested:
                fns[1](_requested)
        elif lib.num_threads != _requested:
            lib.set_num_threads(_requested)


# openblas_{get,set}_num_threads as each build names them (plain, numpy's 64-bit-integer wheel, scipy's).
_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_")
_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_")
#: (get, set) of each OpenBLAS, by the path it was asked for under: found once per library.
_counts: dict[str, tuple[Any, Any] | None] = {}
#: Held while the libraries' counts are lowered, so that two threads' calls do not restore each
#: other's values out of order (a second caller waits: its LU would run on one thread anyway).
_lapack_lock = threading.RLock()
#: (set function, count to restore) of the libraries one_blas_thread has lowered, while it has.
_lowered: list[tuple[Any, int]] = []


def _new_lock_in_child() -> None:
    # A fork while another thread is inside one_blas_thread would leave the child a lock no thread
    # of its own holds (its LU calls would wait forever) and its BLAS on one thread for good.
    global _lapack_lock
    _lapack_lock = threading.RLock()
    for set_, n in _lowered:
        set_(n)
    _lowered.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


def _count_functions(path: str) -> tuple[Any, Any] | None:
    if path not in _counts:
        found = None
        try:
            lib = ctypes.CDLL(path)  # already loaded: a new reference to it, not a second copy
            get = next((getattr(lib, n) for n in _GETTERS if hasattr(lib, n)), None)
            set_ = next((getattr(lib, n) for n in _SETTERS if hasattr(lib, n)), None)
            if get is not None and set_ is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                found = (get, set_)
        except OSError:
            pass
        _counts[path] = found
    return _counts[path]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Runs the block with every shared OpenBLAS on one thread, restoring each one's count after.

    For LAPACK's LU and what calls it (see the module's docstring): its single-threaded path has no
    second pool. Other threads' BLAS calls made meanwhile run on one thread too (slower, not wrong).
    """
    # Only the shared libraries: one that was never handed the callback runs all of its LU's jobs on
    # its own pool, with nothing to wait for on the OpenMP team.
    with _lapack_lock:
        saved = []
        for path in shared:
            fns = _count_functions(path)
            if fns is not None:
                n = fns[0]()
                if n > 1:
                    fns[1](1)
                    saved.append((fns[1], n))
        _lowered.extend(saved)
        try:
            yield
        finally:
            for set_, n in saved:
                set_(n)
            del _lowered[len(_lowered) - len(saved):]

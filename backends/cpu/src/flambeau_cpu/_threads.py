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
"""
from __future__ import annotations

from typing import Any

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
        if _ours(lib.info()) and lib.num_threads != _requested:
            lib.set_num_threads(_requested)

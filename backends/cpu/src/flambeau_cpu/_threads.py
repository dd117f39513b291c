"""The thread count of the BLAS libraries behind numpy and scipy.

``flambeau.set_num_threads`` covers the backend's own OpenMP kernels and, as in PyTorch, the BLAS
that the matrix products run on. numpy and scipy each bundle their own OpenBLAS, each with its own
thread pool; threadpoolctl finds the ones loaded in the process. scipy's is loaded only at the first
small fused product (see ``kernels.blas``), so the requested count is kept and applied again then.
threadpoolctl is imported here, at the first call, not at ``import flambeau``.
"""
from __future__ import annotations

#: The count last asked for by ``set_blas_threads``; None while BLAS keeps its own default.
_requested: int | None = None


def set_blas_threads(n: int) -> None:
    """Limit every BLAS library loaded now (and, through :func:`reapply`, later) to ``n`` threads."""
    global _requested
    _requested = n
    reapply()


def reapply() -> None:
    """Apply the requested count to the BLAS libraries loaded since it was set; no-op if none was."""
    if _requested is None:
        return
    from threadpoolctl import threadpool_limits

    # Not used as a context manager: the limit stays after the call, as set_num_threads means.
    threadpool_limits(limits=_requested, user_api="blas")

"""Finding CuPy, a driver and a GPU, and the errors that say which is missing.

Nothing here imports CuPy at module import: ``import flambeau`` and ``import flambeau.cuda`` stay cheap
and never fail. :func:`array_module` imports it on first use and caches the answer, failure included.
"""
from __future__ import annotations

import threading
from types import ModuleType

DISTRIBUTION = "flambeau-backend-cuda"
INSTALL_HINT = (f"install CuPy for your CUDA version with `pip install '{DISTRIBUTION}[cuda12]'` (CUDA 12) "
                f"or `pip install '{DISTRIBUTION}[cuda13]'` (CUDA 13)")
# PyTorch's wording (torch/cuda/__init__.py, raised by _cuda_init), with flambeau's name where it names itself.
NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
             "driver from http://www.nvidia.com/Download/index.aspx")
NO_GPU = "No CUDA GPUs are available"
NOT_COMPILED = f"flambeau has no CUDA support: CuPy is not installed; {INSTALL_HINT}"


class CudaUnavailable(RuntimeError):
    """Why the ``cuda`` device cannot be used: no CuPy, no driver, or no GPU (``kind`` says which)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


_lock = threading.Lock()
_cache: dict[str, object] = {}


def _probe() -> ModuleType | CudaUnavailable:
    try:
        import cupy
    except ImportError as exc:
        return CudaUnavailable("no-cupy", f"{NOT_COMPILED} ({type(exc).__name__}: {exc})")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CuPy raises CUDARuntimeError, or a loader error without libcuda
        return CudaUnavailable("no-driver", f"no CUDA driver found: {NO_DRIVER} (CuPy: {type(exc).__name__}: {exc})")
    if count < 1:
        return CudaUnavailable("no-gpu", f"{NO_GPU} (the CUDA driver found no device)")
    return cupy


def array_module() -> ModuleType:
    """CuPy, ready to use; raises :class:`CudaUnavailable` (the same one every time) if it is not."""
    with _lock:
        if "result" not in _cache:
            _cache["result"] = _probe()
    result = _cache["result"]
    if isinstance(result, CudaUnavailable):
        raise result
    return result  # type: ignore[return-value]


def unavailable_reason() -> CudaUnavailable | None:
    """Why CUDA cannot be used, or None when it can."""
    try:
        array_module()
    except CudaUnavailable as exc:
        return exc
    return None


def _reset_for_tests() -> None:
    """Forget the cached probe (tests that hide or fake CuPy call this)."""
    with _lock:
        _cache.clear()

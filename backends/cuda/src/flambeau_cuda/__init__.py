"""flambeau's CUDA backend: tensors on NVIDIA GPUs through CuPy (``device="cuda"``, ``"cuda:1"``...).

The ``flambeau.backends`` entry point ``cuda`` names :func:`create_backend`; flambeau calls it on first
use of the device. Without CuPy, a driver or a GPU it raises the error that says which is missing,
and ``flambeau.cuda.is_available()`` is False.

Example::

    >>> import flambeau as fb
    >>> x = fb.ones(3, device="cuda")
    >>> (x + 1).sum().item()
    6.0
"""
from __future__ import annotations

from ._version import __version__

__all__ = ["__version__", "create_backend"]


def create_backend():
    """The entry point's factory: the backend on CuPy, or :class:`~flambeau_cuda._runtime.CudaUnavailable`."""
    from ._backend import CudaBackend
    from ._runtime import array_module

    return CudaBackend(array_module())

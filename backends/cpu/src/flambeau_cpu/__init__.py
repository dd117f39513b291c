"""flambeau's CPU backend: found through the ``flambeau.backends`` entry point ``cpu``."""
from __future__ import annotations

from ._version import __version__


def create_backend():
    """The entry point's factory."""
    from . import _malloc
    from ._backend import CpuBackend

    _malloc.tune()  # freed buffers reused, not faulted in again (see _malloc)
    return CpuBackend()

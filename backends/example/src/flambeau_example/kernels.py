"""The core tier's kernels: flambeau's array-API kernels over numpy and this backend's storage.

:func:`flambeau.backend_kit.make_core_kernels` writes every core-tier kernel once for any numpy-like
array module; what this backend says for itself is all that is here: numpy is the array module,
``_storage`` holds the views, the random engine is ``_backend``'s (a user's Generator's, or the
device default), and ``erf`` is Python's (the example backend depends on numpy alone, not scipy).
A device with faster kernels of its own adds or replaces entries of :data:`KERNELS`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flambeau.backend_kit import host_erf, make_core_kernels

from . import _storage

__all__ = ["KERNELS"]


def _engine(generator: Any, out: np.ndarray) -> np.random.Generator:
    """The numpy Generator ``uniform`` and ``random`` draw from: the user's, or the device's default."""
    from . import _backend

    return (generator._native if generator is not None else _backend.default_engine()).numpy


KERNELS = make_core_kernels(np, _storage, _engine, erf=host_erf)

"""The core tier's kernels for any numpy-like array module: a head start for a backend.

A backend must give a kernel for every op of the core tier (``python -m flambeau manifest --tier
core``); the dispatcher runs everything else through decompositions onto them. When the device's
library speaks numpy's API (numpy itself, CuPy, ...), those kernels are the same code for every
such library, so they live here, once: a backend says how its memory holds views (an
:class:`ArrayStorage`), where its random numbers come from, and which ``erf`` to use, and gets
the whole tier back as a ``{op name: kernel}`` dict to return from ``Backend.kernels()``.

The flambeau backends ``example`` (numpy) and ``cuda`` (CuPy) are built this way; their
``kernels.py`` show the whole of what a backend writes. A third-party backend does the same::

    import numpy as np
    from flambeau.backend_kit import host_erf, make_core_kernels

    from . import _storage          # allocate, offset_of, strides_of, strided, shares_memory

    def _engine(generator, out):    # a numpy Generator-like engine for uniform/random
        return (generator._native if generator is not None else default_engine()).numpy

    KERNELS = make_core_kernels(np, _storage, _engine, erf=host_erf)

It imports numpy and nothing else (no backend, no other part of flambeau), and ``import
flambeau`` does not load it: a backend imports it when it builds its kernels. Kernels a
backend writes for itself (faster ones, or for ops beyond the core tier) are simply added to the
dict, or replace entries in it.

Helpers a backend's own kernels may want as well: :func:`fitted` (a Python integer wrapped into a
narrow dtype, as the CPU does), :func:`work_dtype` (half types compute in float32),
:func:`is_floating`, :func:`contiguous_strides` and :func:`view_strides` (stride arithmetic in
elements).
"""
from __future__ import annotations

from ._array_kernels import RandomSource, ScatterAt, host_erf, make_core_kernels
from ._numbers import HALF_TYPES, comparison_dtype, fitted, is_floating, work_dtype
from ._storage import ArrayStorage
from ._strides import contiguous_strides, view_strides
from ._view_kernels import make_view_kernels

__all__ = ["ArrayStorage", "HALF_TYPES", "RandomSource", "ScatterAt", "comparison_dtype", "contiguous_strides",
           "fitted", "host_erf", "is_floating", "make_core_kernels", "make_view_kernels", "view_strides",
           "work_dtype"]

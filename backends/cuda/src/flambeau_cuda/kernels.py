"""The core tier's kernels on CuPy: flambeau's array-API kernels, with what CuPy does differently.

:func:`flambeau.backend_kit.make_core_kernels` writes every core-tier kernel once for any numpy-like
array module. This module gives it what the CUDA backend says for itself: CuPy's views over device
allocations (``_storage.Storage``), the Philox engines (``_random.py``), ``cupyx.scipy.special``'s
``erf``, cuBLAS's half-precision products, and a host fallback where a CuPy lacks a ``ufunc.at``.

:func:`make_kernels` builds them for one array module: CuPy in production, the numpy test double of
``tests/sim/_fake_cupy.py`` in CI, which runs every line here except CuPy's own kernels.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable

import numpy as np

from flambeau.backend_kit import make_core_kernels

from . import _storage

__all__ = ["make_kernels", "special_functions"]


def special_functions(xp: ModuleType) -> ModuleType:
    """``scipy.special`` for ``xp``: cupyx's on a GPU; a test double names its own as ``_special``."""
    own = getattr(xp, "_special", None)
    return own if own is not None else importlib.import_module("cupyx.scipy.special")


def make_kernels(xp: ModuleType, engines: Callable[[Any, Any], Any]) -> dict[str, Callable[..., Any]]:
    """The core tier's kernels on ``xp``; ``engines(generator, out)`` gives the Philox engine to draw from."""
    special = special_functions(xp)

    def scatter_at(name: str, result: Any, key: tuple, values: Any) -> Any:
        # CuPy's add.at and multiply.at accumulate repeated indices with atomics; a CuPy without this
        # ufunc's `at` (multiply on older ones) accumulates on the host, in the same order.
        try:
            getattr(xp, name).at(result, key, values)
            return result
        except (AttributeError, NotImplementedError, TypeError):
            host = xp.asnumpy(result)
            getattr(np, name).at(host, tuple(xp.asnumpy(k) for k in key), xp.asnumpy(values))
            return xp.asarray(host)

    return make_core_kernels(
        xp, _storage.Storage(xp), lambda generator, out: engines(generator, out).next_generator(),
        erf=special.erf, scatter_at=scatter_at,
        # cuBLAS multiplies float16/bfloat16 accumulating in float32, as PyTorch's; the numpy test double
        # has no such product (numpy accumulates in the half type), so there the kit computes in float32.
        native_half_matmul=not getattr(xp, "IS_TEST_DOUBLE", False))

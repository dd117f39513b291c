"""The CPU backend's kernels, by op name: numpy calls where numpy is fast, C++ where it is not."""
from __future__ import annotations

from typing import Any, Callable


def all_kernels() -> dict[str, Callable[..., Any]]:
    from . import elementwise, factories, indexing, linalg, reductions, views
    from . import pointwise
    from . import shape
    from . import index_ops
    from . import cumulative, reductions2, sorting
    from . import random
    from . import blas
    from . import linalg_ops, fft_ops

    table: dict[str, Callable[..., Any]] = {}
    for module in (elementwise, reductions, views, linalg, factories, indexing, pointwise, shape, index_ops,
                   cumulative, reductions2, sorting, random, linalg_ops, fft_ops):
        table.update(module.KERNELS)
    table.update(blas.KERNELS)
    # The C++ extension (_C) is required: a missing or broken build must fail the backend's load
    # loudly rather than leave numpy kernels silently standing in for the native ones.
    from . import native
    from . import optim
    table.update(native.KERNELS)
    table.update(optim.KERNELS)  # used only when flambeau-optim declares these ops
    return table

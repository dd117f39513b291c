"""The CPU backend's kernels, by op name: numpy calls where numpy is fast, C++ where it is not."""
from __future__ import annotations

from typing import Any, Callable


def all_kernels() -> dict[str, Callable[..., Any]]:
    from . import elementwise, factories, indexing, linalg, reductions, views
    from . import pointwise
    from . import cumulative, reductions2, sorting
    from . import shape
    from . import index_ops
    from . import random
    from . import blas
    from . import linalg_ops, fft_ops

    table: dict[str, Callable[..., Any]] = {}
    for module in (elementwise, reductions, views, linalg, factories, indexing, pointwise, cumulative, reductions2, sorting, index_ops, shape, random,
                   linalg_ops, fft_ops):
        table.update(module.KERNELS)
    table.update(blas.KERNELS)
    try:
        from . import native, optim
    except ImportError:  # the C++ extension is optional at run time only in a source checkout
        return table
    table.update(native.KERNELS)
    table.update(optim.KERNELS)  # used only when flambeau-optim declares these ops
    return table

"""The CPU backend's kernels, by op name: numpy calls where numpy is fast, C++ where it is not."""
from __future__ import annotations

from typing import Any, Callable


def all_kernels() -> dict[str, Callable[..., Any]]:
    # The C++ extension (_C, behind `native` and `optim`) is required: a missing or broken build
    # fails the backend's load loudly rather than leaving numpy kernels silently in its place.
    from . import (blas, cumulative, elementwise, factories, fft_ops, index_ops, indexing, linalg, linalg_ops,
                   matrix_exp, native, nn_loss, optim, pointwise, random, reductions, softmax, statistics, shape,
                   sorting, views)

    # Later modules override earlier ones: `native` replaces numpy kernels where C++ is faster.
    # `optim`'s and `nn_loss`'s kernels stay unused unless flambeau-optim / flambeau-nn declare their ops.
    modules = (elementwise, reductions, views, linalg, factories, indexing, pointwise, shape, index_ops, cumulative,
               statistics, sorting, random, linalg_ops, matrix_exp, fft_ops, blas, native, softmax, optim, nn_loss)
    table: dict[str, Callable[..., Any]] = {}
    for module in modules:
        table.update(module.KERNELS)
    # float16/bfloat16 reductions, scans and products accumulate in float32 (see _wide): one
    # wrapper around whichever kernel won above, so numpy, BLAS and C++ paths all get it.
    from ._wide import ACCUMULATING_OPS, accumulating

    for name in ACCUMULATING_OPS:
        if name in table:
            table[name] = accumulating(table[name])
    from .. import _threads

    _threads.share_new_pools()  # numpy's BLAS runs its parallel jobs on the kernels' OpenMP team
    return table

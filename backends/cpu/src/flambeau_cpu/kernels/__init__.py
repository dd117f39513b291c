"""The CPU backend's kernels, by op name: numpy calls where numpy is fast, C++ where it is not."""
from __future__ import annotations

from typing import Any, Callable


def all_kernels() -> dict[str, Callable[..., Any]]:
    # The C++ extension (_C, behind `native` and `optim`) is required: a missing or broken build
    # fails the backend's load loudly rather than leaving numpy kernels silently in its place.
    from . import (activation, blas, cumulative, elementwise, factories, fft_ops, index_ops, indexing, linalg,
                   linalg_ops, matrix_exp, native, nn_activation, nn_linear, nn_loss, optim, pointwise, random,
                   reductions, softmax, statistics, shape, sorting, views)

    # Later modules override earlier ones: `native` replaces numpy kernels where C++ is faster.
    # `optim`'s and `nn_*`'s kernels stay unused unless flambeau-optim / flambeau-nn declare their ops.
    modules = (elementwise, reductions, views, linalg, factories, indexing, pointwise, shape, index_ops, cumulative,
               statistics, sorting, random, linalg_ops, matrix_exp, fft_ops, blas, native, softmax, optim, nn_linear,
               nn_loss, activation, nn_activation)
    table: dict[str, Callable[..., Any]] = {}
    for module in modules:
        table.update(module.KERNELS)
    # flambeau-distributions' samplers: unused unless that package declares their ops.
    from . import dist_samplers

    table.update(dist_samplers.KERNELS)
    # float16/bfloat16 reductions, scans and products accumulate in float32 (see _wide): one
    # wrapper around whichever kernel won above, so numpy, BLAS and C++ paths all get it.
    from ._wide import ACCUMULATING_OPS, accumulating

    for name in ACCUMULATING_OPS:
        if name in table:
            table[name] = accumulating(table[name])
    # flambeau-nn's normalization and embedding kernels: unused unless that package declares their ops.
    from . import nn_normalization, nn_sparse

    table.update(nn_normalization.KERNELS)
    table.update(nn_sparse.KERNELS)
    # flambeau-nn part 2: convolution, pooling, padding, vision, recurrent and attention kernels.
    from . import nn_conv, nn_padding, nn_pooling, nn_rnn, nn_transformer, nn_vision

    for module in (nn_conv, nn_pooling, nn_padding, nn_vision, nn_rnn, nn_transformer):
        table.update(module.KERNELS)
    from .. import _threads

    _threads.share_new_pools()  # numpy's BLAS runs its parallel jobs on the kernels' OpenMP team
    return table

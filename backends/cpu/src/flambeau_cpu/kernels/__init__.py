"""The CPU backend's kernels, by op name: numpy calls where numpy is fast, C++ where it is not."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def all_kernels() -> dict[str, Callable[..., Any]]:
    # The C++ extension (_C, behind `native` and `optim`) is required: a missing or broken build
    # fails the backend's load loudly rather than leaving numpy kernels silently in its place.
    from . import (activation, blas, cumulative, elementwise, factories, fft_ops, index_ops, indexing, linalg,
                   linalg_ops, matrix_exp, native, pointwise, random, reductions, softmax, statistics, shape,
                   sorting, views)

    # The kernels of other distributions' ops (flambeau-nn's, -optim's, -distributions') are imported
    # only when that distribution declared its ops: the table is built after every plugin has, and
    # keeps only kernels of declared ops anyway. With core-tensor, cpu, autograd and optim, the
    # dozen nn modules are a third of the backend's load.
    declared = _declaring()
    extra = _OTHER_PACKAGES_KERNELS if declared is None else {
        module: dist for module, dist in _OTHER_PACKAGES_KERNELS.items() if dist in declared}
    more = {name: importlib.import_module(f"{__name__}.{name}") for name in extra}

    # Later modules override earlier ones: `native` replaces numpy kernels where C++ is faster.
    modules = (elementwise, reductions, views, linalg, factories, indexing, pointwise, shape, index_ops, cumulative,
               statistics, sorting, random, linalg_ops, matrix_exp, fft_ops, blas, native, softmax, more.get("optim"),
               more.get("nn_linear"), more.get("nn_loss"), activation, more.get("nn_activation"),
               more.get("dist_samplers"))
    table: dict[str, Callable[..., Any]] = {}
    for module in modules:
        if module is not None:
            table.update(module.KERNELS)
    # float16/bfloat16 reductions, scans and products accumulate in float32 (see _wide): one
    # wrapper around whichever kernel won above, so numpy, BLAS and C++ paths all get it.
    from ._wide import ACCUMULATING_OPS, accumulating

    for name in ACCUMULATING_OPS:
        if name in table:
            table[name] = accumulating(table[name])
    # flambeau-nn's normalization and embedding kernels, then part 2: convolution, pooling, padding,
    # vision, recurrent and attention kernels.
    for name in ("nn_normalization", "nn_sparse", "nn_conv", "nn_pooling", "nn_padding", "nn_vision", "nn_rnn",
                 "nn_transformer"):
        if name in more:
            table.update(more[name].KERNELS)
    from .. import _threads

    _threads.share_new_pools()  # numpy's BLAS runs its parallel jobs on the kernels' OpenMP team
    return table


#: kernel module -> the distribution whose ops its kernels implement
_OTHER_PACKAGES_KERNELS = {
    "optim": "flambeau-optim", "nn_linear": "flambeau-nn", "nn_loss": "flambeau-nn", "nn_activation": "flambeau-nn",
    "dist_samplers": "flambeau-distributions", "nn_normalization": "flambeau-nn", "nn_sparse": "flambeau-nn",
    "nn_conv": "flambeau-nn", "nn_pooling": "flambeau-nn", "nn_padding": "flambeau-nn", "nn_vision": "flambeau-nn",
    "nn_rnn": "flambeau-nn", "nn_transformer": "flambeau-nn",
}


def _declaring() -> set[str] | None:
    """The distributions that declared ops (None outside a loaded flambeau: every module is imported)."""
    try:
        from flambeau.ops._registry import OPS
    except ImportError:  # pragma: no cover - the backend always runs under flambeau
        return None
    return {decl.provider for decl in OPS.values()}

"""The kit's cases for core-tensor's own ops, one module per family."""

from __future__ import annotations

from .._case import OpCase


def core_cases() -> list[OpCase]:
    from . import elementwise, factories, indexing, linalg, reductions, views
    from . import pointwise, pointwise_special
    from . import reductions2, sorting
    from . import shape, shape_diag, shape_extra
    from . import random
    from . import blas, other
    from . import index_ops
    from . import linalg_ops, fft_ops

    return [
        *elementwise.cases(),
        *reductions.cases(),
        *views.cases(),
        *linalg.cases(),
        *factories.cases(),
        *indexing.cases(),
        *pointwise.cases(),
        *pointwise_special.cases(),
        *reductions2.cases(),
        *sorting.cases(),
        *shape.cases(),
        *shape_diag.cases(),
        *shape_extra.cases(),
        *random.cases(),
        *blas.cases(),
        *other.cases(),
        *index_ops.cases(),
        *linalg_ops.cases(),
        *fft_ops.cases(),
    ]

"""core-tensor's own ops, declared through the same pluggy hook as every other package's."""
from __future__ import annotations

from ..plugins._hookspecs import hookimpl
from . import elementwise, factories, indexing, linalg, reductions, views
from . import reductions2, sorting
from . import index_ops
from . import creation, shape, shape_diag, shape_extra
from . import pointwise, pointwise_special
from . import random
from . import blas, other
from . import linalg_ops, fft_ops


@hookimpl
def flambeau_declare_ops():
    return [*elementwise.declarations(), *reductions.declarations(), *views.declarations(),
            *linalg.declarations(), *factories.declarations(), *indexing.declarations(), *index_ops.declarations(),
            *pointwise.declarations(), *pointwise_special.declarations(),
            *reductions2.declarations(), *sorting.declarations(),
            *shape.declarations(), *shape_diag.declarations(), *shape_extra.declarations(),
            *creation.declarations(),
            *random.declarations(), *blas.declarations(), *other.declarations(), *linalg_ops.declarations(), *fft_ops.declarations()]

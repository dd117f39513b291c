"""core-tensor's own ops, declared through the same pluggy hook as every other package's."""
from __future__ import annotations

from ..plugins._hookspecs import hookimpl
from . import (activation, blas, creation, elementwise, factories, fft_ops, index_ops, indexing, linalg, linalg_ops,
               other, pointwise, pointwise_special, random, reductions, statistics, shape, shape_diag, shape_extra,
               softmax, sorting, views)

#: One module per family of ops, each with ``declarations()``.
FAMILIES = (elementwise, reductions, views, linalg, factories, indexing, index_ops, pointwise, pointwise_special,
            statistics, sorting, shape, shape_diag, shape_extra, creation, random, blas, other, linalg_ops, fft_ops,
            softmax, activation)


@hookimpl
def flambeau_declare_ops():
    decls = [decl for family in FAMILIES for decl in family.declarations()]
    _assign_tiers(decls)
    return decls


def _assign_tiers(decls: list) -> None:
    """Mark the core tier, and give every other op that has no composite its decomposition onto it."""
    from ._core_tier import CORE_OPS
    # The decompositions' modules load at the first call of one (see decomp.DeferredDecomposition):
    # what each op gets now is a stand-in, with the ops it calls and where it computes, from the index.
    from .decomp import deferred

    core = set(CORE_OPS)
    for decl in decls:
        if decl.name in core:
            decl.tier = "core"
            continue
        if decl.composite is None:
            found = deferred(decl.name)
            if found is not None:
                decl.composite, decl.uses, decl.host = found

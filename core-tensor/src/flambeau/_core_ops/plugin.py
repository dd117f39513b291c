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
    # The decompositions register themselves (``decomp.decomposition``) as their modules are imported.
    from .decomp import (DECOMPOSITIONS, blas, factories, host, indexing, pointwise, random,  # noqa: F401
                         reductions, shape, special, integer, advanced_index, compare, counting, scans, search,
                         order, host_fft, host_linalg,
                         special_gamma, special_normal, special_bessel,
                         unique, scatter_reduce, floatbits, sampling)

    core = set(CORE_OPS)
    decompositions = DECOMPOSITIONS
    for decl in decls:
        if decl.name in core:
            decl.tier = "core"
            continue
        found = decompositions.get(decl.name)
        if found is not None and decl.composite is None:
            decl.composite, decl.uses, decl.host = found

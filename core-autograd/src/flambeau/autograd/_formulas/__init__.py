"""The backward formulas of core-tensor's differentiable ops, registered through the gradient hook."""
from __future__ import annotations

from ..formula import Formula
from . import (activation, blas, elementwise, fft_ops, index_ops, linalg, linalg_eig, linalg_lu, linalg_matrix_exp,
               linalg_ops, misc, pointwise, random, reductions, softmax, statistics, shape, sorting, views)

#: One module per family of ops, each with ``formulas()``.
FAMILIES = (elementwise, reductions, views, linalg, misc, statistics, sorting, pointwise, random, shape, index_ops,
            linalg_ops, linalg_lu, linalg_eig, linalg_matrix_exp, fft_ops, blas, softmax, activation)


def all_formulas() -> dict[str, Formula]:
    table: dict[str, Formula] = {}
    for family in FAMILIES:
        table.update(family.formulas())
    return table

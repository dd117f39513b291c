"""The backward formulas of core-tensor's differentiable ops, registered through the gradient hook."""
from __future__ import annotations

from ..formula import Formula
from . import elementwise, linalg, misc, reductions, views
from . import reductions2, sorting
from . import pointwise
from . import random
from . import shape
from . import index_ops
from . import linalg_ops, fft_ops
from . import blas


def all_formulas() -> dict[str, Formula]:
    table: dict[str, Formula] = {}
    for module in (elementwise, reductions, views, linalg, misc, reductions2, sorting, pointwise, random, shape):
        table.update(module.formulas())
    table.update(index_ops.formulas())
    table.update(linalg_ops.formulas())
    table.update(fft_ops.formulas())
    table.update(blas.formulas())
    return table

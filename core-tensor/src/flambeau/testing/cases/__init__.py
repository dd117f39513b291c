"""The kit's cases for core-tensor's own ops, one module per family."""

from __future__ import annotations

from .._case import OpCase


def core_cases() -> list[OpCase]:
    from . import (activation, blas, complex_views, elementwise, factories, fft_ops, index_ops, indexing, linalg,
                   linalg_ops, matrix_exp, other, pointwise, pointwise_special, random, reductions, softmax, statistics,
                   shape, shape_diag, shape_extra, sorting, views)

    families = (elementwise, reductions, views, linalg, factories, indexing, pointwise, pointwise_special,
                statistics, sorting, shape, shape_diag, shape_extra, random, blas, other, index_ops, linalg_ops,
                fft_ops, complex_views, matrix_exp, activation, softmax)
    return [case for family in families for case in family.cases()]

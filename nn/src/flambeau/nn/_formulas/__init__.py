"""The backward formulas of flambeau-nn's differentiable ops (same module names as ``flambeau.nn._ops``)."""
from __future__ import annotations

from typing import Any

from . import linear, activation, dropout, sparse, normalization, distance, loss
from . import conv, pooling, padding, vision, rnn, transformer

#: One module per family of ops, each with ``formulas()``.
FAMILIES = (linear, activation, dropout, sparse, normalization, distance, loss,
            conv, pooling, padding, vision, rnn, transformer)


def all_formulas() -> dict[str, Any]:
    table: dict[str, Any] = {}
    for family in FAMILIES:
        table.update(family.formulas())
    return table

"""flambeau-nn's op plugin (entry point ``flambeau: nn``): its ops and their backward formulas."""
from __future__ import annotations

from typing import Any

from flambeau.ops import OpDecl
from flambeau.plugins import hookimpl

from . import linear, activation, dropout, sparse, normalization, distance, loss
from . import conv, pooling, padding, vision, rnn, transformer

#: One module per family of ops, each with ``declarations()``.
FAMILIES = (linear, activation, dropout, sparse, normalization, distance, loss,
            conv, pooling, padding, vision, rnn, transformer)


@hookimpl
def flambeau_declare_ops() -> list[OpDecl]:
    return [decl for family in FAMILIES for decl in family.declarations()]


@hookimpl
def flambeau_register_gradients() -> dict[str, Any]:
    # Stand-ins from the index: the formula modules load with the first record of one of their ops.
    from .._formulas import deferred_formulas

    return deferred_formulas()

"""The backward formulas of flambeau-nn's differentiable ops (same module names as ``flambeau.nn._ops``).

One module per family of ops, each with ``formulas()``. ``import flambeau`` imports none of them:
the gradient hook registers a ``DeferredFormula`` per op (core-autograd's stand-in, pointed at this
package), read from the generated index ``_index.FAMILY_OF``; a family is imported when autograd
first records one of its ops. Regenerate the index after adding or moving a formula:
``python -m flambeau.nn._formulas`` (``nn/tests/test_nn_formula_index.py`` checks it).
"""
from __future__ import annotations

import importlib
from typing import Any

#: The family modules, in registration order (a later family's formula for an op replaces an earlier one's).
FAMILIES = ("linear", "activation", "dropout", "sparse", "normalization", "distance", "loss",
            "conv", "pooling", "padding", "vision", "rnn", "transformer")


def family_formulas(family: str) -> dict[str, Any]:
    """The formulas of one family module (importing it)."""
    return importlib.import_module(f"{__name__}.{family}").formulas()


def all_formulas() -> dict[str, Any]:
    """Every formula, each family imported (what the index is generated from)."""
    from flambeau.autograd import _formulas

    return _formulas.all_formulas(__name__, FAMILIES)


def deferred_formulas() -> dict[str, Any]:
    """``{op name: DeferredFormula}`` for every op of the index, no family imported."""
    from flambeau.autograd._formulas import DeferredFormula

    try:
        from ._index import FAMILY_OF
    except ImportError:  # a source tree mid-regeneration: every family loads now, correctly, more slowly
        return all_formulas()
    return {name: DeferredFormula(name, family, __name__) for name, family in FAMILY_OF.items()}


def index_source() -> str:
    """The text of ``_index.py`` for the formulas the family modules define now."""
    from flambeau.autograd import _formulas

    return _formulas.index_source(__name__, FAMILIES)


def write_index() -> str:
    from flambeau.autograd import _formulas

    return _formulas.write_index(__name__, FAMILIES)

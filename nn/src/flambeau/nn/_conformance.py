"""Conformance cases for flambeau-nn's ops (entry point ``flambeau.testing: nn``).

The backend conformance kit (``pytest --pyargs flambeau.testing --flambeau-backend NAME``) runs every
declared op against a numpy reference; these are nn's cases, one family per helper function.
"""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    """flambeau-nn's conformance cases (the ``flambeau.testing`` entry point)."""
    from ._norm_conformance import embedding_cases, norm_cases

    return [*norm_cases(), *embedding_cases()]

"""Declarations of flambeau-nn's attention and transformers ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

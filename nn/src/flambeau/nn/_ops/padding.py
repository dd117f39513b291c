"""Declarations of flambeau-nn's padding (F.pad's modes and the padding layers) ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

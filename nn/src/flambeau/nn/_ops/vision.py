"""Declarations of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

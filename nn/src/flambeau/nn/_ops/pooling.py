"""Declarations of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

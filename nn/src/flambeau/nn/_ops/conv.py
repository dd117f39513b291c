"""Declarations of flambeau-nn's convolution (Conv*, ConvTranspose*, Unfold/Fold) ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

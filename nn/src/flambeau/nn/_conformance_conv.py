"""Conformance cases of flambeau-nn's convolution (Conv*, ConvTranspose*, Unfold/Fold) ops."""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    return []

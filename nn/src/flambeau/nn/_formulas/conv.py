"""Backward formulas of flambeau-nn's convolution (Conv*, ConvTranspose*, Unfold/Fold) ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

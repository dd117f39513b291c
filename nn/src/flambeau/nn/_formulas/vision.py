"""Backward formulas of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

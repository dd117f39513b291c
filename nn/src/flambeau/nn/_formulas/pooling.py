"""Backward formulas of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

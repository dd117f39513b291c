"""Backward formulas of flambeau-nn's normalization ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

"""Backward formulas of flambeau-nn's padding (F.pad's modes and the padding layers) ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

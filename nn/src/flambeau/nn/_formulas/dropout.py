"""Backward formulas of flambeau-nn's dropout ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

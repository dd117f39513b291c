"""Backward formulas of flambeau-nn's attention and transformers ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

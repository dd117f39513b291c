"""Functional forms: padding (F.pad's modes and the padding layers)."""
from __future__ import annotations

__all__: list[str] = []

"""Functional forms: pooling (max, average, adaptive, fractional, LP, unpooling)."""
from __future__ import annotations

__all__: list[str] = []

"""Modules: vision (pixel/channel shuffle, interpolation, grid sampling)."""
from __future__ import annotations

__all__: list[str] = []

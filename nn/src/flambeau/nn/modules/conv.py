"""Modules: convolution (Conv*, ConvTranspose*, Unfold/Fold)."""
from __future__ import annotations

__all__: list[str] = []

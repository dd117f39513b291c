"""Functional forms: softmax, softmin, log_softmax, gumbel_softmax."""
from __future__ import annotations

__all__: list[str] = []

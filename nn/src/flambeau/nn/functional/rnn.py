"""Functional forms: recurrent layers (RNN, LSTM, GRU and their cells)."""
from __future__ import annotations

__all__: list[str] = []

"""Backward formulas of flambeau-nn's recurrent layers (RNN, LSTM, GRU and their cells) ops."""
from __future__ import annotations

from typing import Any


def formulas() -> dict[str, Any]:
    return {}

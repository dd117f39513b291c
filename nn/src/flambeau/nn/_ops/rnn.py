"""Declarations of flambeau-nn's recurrent layers (RNN, LSTM, GRU and their cells) ops."""
from __future__ import annotations

from flambeau.ops import OpDecl


def declarations() -> list[OpDecl]:
    return []

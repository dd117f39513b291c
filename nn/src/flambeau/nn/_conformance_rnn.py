"""Conformance cases of flambeau-nn's recurrent layers (RNN, LSTM, GRU and their cells) ops."""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    return []

"""Conformance cases of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops."""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    return []

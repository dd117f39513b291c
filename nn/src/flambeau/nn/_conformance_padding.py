"""Conformance cases of flambeau-nn's padding (F.pad's modes and the padding layers) ops."""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    return []

"""Conformance cases of flambeau-nn's vision (pixel/channel shuffle, interpolation, grid sampling) ops."""
from __future__ import annotations

from flambeau.testing import OpCase


def cases() -> list[OpCase]:
    return []

"""Random engines: Philox4x32-10 on the device, seeded by ``flambeau.manual_seed``.

Philox is counter-based, so an engine's whole state is two numbers: its seed and how many draws it
has made. Each draw uses a fresh Philox stream keyed by both (CuPy's ``Philox4x3210`` bit generator,
cuRAND's Philox on a GPU), which makes ``get_state``/``set_state`` exact and runs repeat run to run.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

_MASK64 = (1 << 64) - 1


def _mix(seed: int, counter: int) -> int:
    """One 63-bit key per (seed, draw): splitmix64 of both, so nearby seeds give unrelated streams."""
    z = (seed ^ (counter * 0x9E3779B97F4A7C15)) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) & ((1 << 63) - 1)


class PhiloxEngine:
    """The state behind a ``flambeau.Generator(device="cuda")``: a seed and a draw counter."""

    def __init__(self, xp: ModuleType, seed: int) -> None:
        self._xp = xp
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        self.seed = int(seed) & _MASK64
        self.counter = 0

    def initial_seed(self) -> int:
        return self.seed

    def next_generator(self) -> Any:
        """A generator for one draw; the engine steps past it."""
        key = _mix(self.seed, self.counter)
        self.counter += 1
        return self._xp.random.Generator(self._xp.random.Philox4x3210(key))

    def get_state(self) -> np.ndarray:
        return np.array([self.seed, self.counter], dtype=np.uint64).view(np.uint8).copy()

    def set_state(self, state: Any) -> None:
        try:
            raw = np.asarray(state, dtype=np.uint8)
            if raw.ndim != 1 or raw.size != 16:
                raise ValueError(f"expected 16 bytes, got shape {raw.shape}")
            seed, counter = (int(v) for v in raw.view(np.uint64))
        except (ValueError, TypeError) as exc:
            raise RuntimeError(f"invalid generator state for the cuda device: {exc}") from None
        self.seed, self.counter = seed, counter

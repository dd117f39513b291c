"""``flambeau.random``: seeding and RNG state, as ``torch.random`` (the same functions as on ``flambeau``),
and :func:`fork_rng`.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

from .._api_random import (Generator, default_generator_for, get_rng_state, initial_seed, manual_seed, seed,
                           set_rng_state)

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng",
           "default_generator"]


def __getattr__(name: str) -> Any:
    if name == "default_generator":  # resolved on use: the CPU backend may load after this module
        return default_generator_for("cpu")
    raise AttributeError(f"module 'flambeau.random' has no attribute {name!r}")


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] = (), enabled: bool = True, device_type: str = "cpu") -> Iterator[None]:
    """Within the block, draw from the default generators freely: their states are restored on exit.

    Args:
        devices: other devices (``"cuda:0"``...) whose default generators are saved and restored too.
        enabled: False makes this a no-op.
        device_type: accepted for PyTorch compatibility (``devices`` names the devices).

    Example::

        >>> fb.manual_seed(0)
        >>> with fb.random.fork_rng():
        ...     _ = fb.rand(3)
        >>> # the default generator is where it was before the block
    """
    if not enabled:
        yield
        return
    generators = [default_generator_for("cpu")] + [default_generator_for(d) for d in devices]
    states = [g.get_state() for g in generators]
    try:
        yield
    finally:
        for g, state in zip(generators, states):
            g.set_state(state)

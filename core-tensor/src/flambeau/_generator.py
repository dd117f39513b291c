"""``flambeau.Generator``: the state of one device's pseudo-random number generator.

It belongs to the dispatcher layer, below the op declarations (their ``generator=`` checks need the
class); the default generators, seeding and the sampling functions are in ``_api_random``.
"""
from __future__ import annotations

import builtins
import os
from typing import Any

import numpy as np

from . import _dtypes
from ._creation import from_numpy
from ._device import device as _device
from ._tensor import Tensor
from .ops._dispatch import resolve_device
from .ops._registry import TABLES

#: The seed a default generator starts from (PyTorch's too): the same numbers in every fresh process.
DEFAULT_SEED = 67280421310721
_SEED_RANGE = (-(2 ** 63), 2 ** 64)


def _seed_value(seed: Any) -> int:
    """A seed as the engines take it: an int in ``[0, 2**64)`` (negative seeds wrap, as PyTorch's)."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    try:
        seed = builtins.int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
    if not _SEED_RANGE[0] <= seed < _SEED_RANGE[1]:
        raise RuntimeError("Overflow when unpacking long")
    return seed % (2 ** 64)


class Generator:
    """The state of a pseudo-random number generator on one device, passed to sampling ops as ``generator=``.

    A generator starts from the same seed in every process (``initial_seed()`` is 67280421310721 until
    :meth:`manual_seed` or :meth:`seed` changes it), so that a program draws the same numbers each run.

    Args:
        device: the device whose tensors it samples (default ``"cpu"``).

    Example::

        >>> g = fb.Generator().manual_seed(42)
        >>> a = fb.rand(3, generator=g)
        >>> g.manual_seed(42)
        >>> bool((fb.rand(3, generator=g) == a).all())
        True
    """

    __slots__ = ("device", "_native")

    def __init__(self, device: Any = "cpu") -> None:
        dev = resolve_device(device if device is not None else "cpu")
        self.device = dev
        self._native = TABLES[dev.type].backend.create_generator(dev)

    @classmethod
    def _wrap(cls, native: Any, dev: _device) -> "Generator":
        g = cls.__new__(cls)
        g.device = dev
        g._native = native
        return g

    def manual_seed(self, seed: int) -> "Generator":
        """Set the seed; returns the generator itself.

        Args:
            seed: an int in ``[-2**63, 2**64)``; negative seeds are taken modulo ``2**64``.
        """
        self._native.manual_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        """Seed from a non-deterministic source (the OS's entropy); returns the seed chosen."""
        value = builtins.int.from_bytes(os.urandom(8), "little")
        self._native.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed the generator's current stream started from."""
        return self._native.initial_seed()

    def get_state(self) -> Tensor:
        """The generator's whole state as a 1-D ``uint8`` CPU tensor (give it to :meth:`set_state`)."""
        return from_numpy(np.array(self._native.get_state(), dtype=np.uint8, copy=True))

    def set_state(self, new_state: Tensor) -> "Generator":
        """Restore a state that :meth:`get_state` returned; returns the generator itself."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a flambeau.ByteTensor, but got {type(new_state).__name__}")
        if new_state._dtype is not _dtypes.uint8 or new_state._device.type != "cpu":
            raise TypeError("RNG state must be a flambeau.ByteTensor")
        self._native.set_state(np.ascontiguousarray(new_state.numpy()).reshape(-1))
        return self

    def __repr__(self) -> str:
        return f"<flambeau.Generator object at {hex(id(self))}>"

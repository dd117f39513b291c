"""The CPU backend's random engine behind a ``flambeau.Generator``: two streams grown from one seed.

- a Philox4x32-10 counter stream (key = the seed, and an offset in counter blocks) for the bulk
  uniform and normal fills, run by the C++ kernels on several threads with results that do not
  depend on the thread count;
- numpy's PCG64 for the other distributions (poisson, geometric, multinomial...).
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

#: flambeau's default seed (PyTorch's): a fresh process draws the same numbers every run.
DEFAULT_SEED = 67280421310721

_STATE = struct.Struct("<4sQQQQQQIQ")  # tag, seed, PCG64 state (lo, hi), inc (lo, hi), has_uint32,
#                                        uinteger, Philox offset
_TAG = b"FBR1"
_MASK64 = (1 << 64) - 1


class CpuGenerator:
    """The state of one generator: its seed, the Philox offset, and the PCG64 state grown from the seed.

    Kernels draw from :attr:`numpy` (a ``numpy.random.Generator``) or take Philox counter blocks with
    :meth:`take_blocks`. The state round-trips through :meth:`get_state` / :meth:`set_state` (68 bytes).
    """

    __slots__ = ("_seed", "_numpy", "offset")

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        self._seed = int(seed) & _MASK64
        self._numpy: Any = None  # grown from the seed at the first draw (numpy.random costs ~20 ms to import)
        self.offset = 0

    @property
    def numpy(self) -> np.random.Generator:
        """The PCG64 stream (a ``numpy.random.Generator``), made from the seed at first use."""
        if self._numpy is None:
            self._numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self._numpy

    def take_blocks(self, count: int) -> int:
        """Reserve ``count`` Philox counter blocks; returns the first."""
        first = self.offset
        self.offset = (first + count) & _MASK64
        return first

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> np.ndarray:
        st = self.numpy.bit_generator.state
        state, inc = st["state"]["state"], st["state"]["inc"]
        packed = _STATE.pack(_TAG, self._seed, state & _MASK64, state >> 64, inc & _MASK64, inc >> 64,
                             st["has_uint32"], st["uinteger"], self.offset)
        return np.frombuffer(packed, dtype=np.uint8).copy()

    def set_state(self, state: np.ndarray) -> None:
        data = bytes(np.asarray(state, dtype=np.uint8).reshape(-1))
        if len(data) != _STATE.size or data[:4] != _TAG:
            raise RuntimeError(f"Expected a CPU RNG state of size {_STATE.size} (from get_state()) but found the "
                               f"input RNG state size to be {len(data)}"
                               + ("" if len(data) != _STATE.size else " with an unknown format"))
        _, seed, s_lo, s_hi, i_lo, i_hi, has_uint32, uinteger, offset = _STATE.unpack(data)
        bit_generator = np.random.PCG64()
        bit_generator.state = {"bit_generator": "PCG64", "state": {"state": s_lo | (s_hi << 64),
                                                                    "inc": i_lo | (i_hi << 64)},
                               "has_uint32": has_uint32, "uinteger": uinteger}
        self._seed = seed
        self._numpy = np.random.Generator(bit_generator)
        self.offset = offset


#: The engine CPU random ops use when given no generator.
DEFAULT = CpuGenerator()


def engine(generator: object) -> np.random.Generator:
    """The numpy generator a kernel draws from: the given ``flambeau.Generator``'s, else the default's."""
    return (DEFAULT if generator is None else generator._native).numpy  # type: ignore[attr-defined]

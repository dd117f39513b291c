"""The Backend: memory, transfers, random engines, and the core tier's kernels."""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping

import numpy as np

from flambeau import _dtypes
from flambeau.backend_kit import fitted
from flambeau.plugins import Backend

from . import _storage


class Engine:
    """A random engine: numpy's PCG64, its state serialised as bytes."""

    def __init__(self, seed: int = 0) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        self.seed = int(seed)
        self.numpy = np.random.Generator(np.random.PCG64(self.seed))

    def initial_seed(self) -> int:
        return self.seed

    def get_state(self) -> np.ndarray:
        text = json.dumps({"seed": self.seed, "state": self.numpy.bit_generator.state})
        return np.frombuffer(text.encode(), dtype=np.uint8).copy()

    def set_state(self, state: Any) -> None:
        try:
            saved = json.loads(np.asarray(state, dtype=np.uint8).tobytes().decode())
            self.numpy.bit_generator.state = saved["state"]
            self.seed = int(saved["seed"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise RuntimeError(f"invalid generator state for the example device: {exc}") from None


_DEFAULT: list[Engine] = []


def default_engine() -> Engine:
    """The engine random kernels draw from when given no generator."""
    return _DEFAULT[0]


class ExampleBackend(Backend):
    """An ``example`` device whose memory is host memory, computing with numpy."""

    name = "example"
    priority = 0
    dtypes = frozenset(_dtypes.ALL_DTYPES)
    #: Known gaps the kit marks as strict expected failures (each starts failing the run once fixed):
    #: none today, the whole selected kit passes on the core tier alone.
    conformance_xfail: dict[str, str] = {}

    def __init__(self) -> None:
        from flambeau._api_random import DEFAULT_SEED

        self._default = Engine(DEFAULT_SEED)
        _DEFAULT[:] = [self._default]

    def empty(self, shape, dtype, device):
        return _storage.allocate(tuple(shape), dtype.numpy_dtype)

    def fill_(self, native, value):
        if hasattr(value, "_data"):
            value = value.item()
        native[...] = fitted(value, native.dtype)

    def from_numpy(self, array, device):
        out = _storage.allocate(array.shape, array.dtype)
        out[...] = array  # a copy: the device never shares the host's memory
        return out

    def to_numpy(self, native):
        return np.array(native, copy=True)

    def copy_(self, dst, src):
        from .kernels import KERNELS

        KERNELS["copy"](dst, src, dst)

    def storage_offset(self, native):
        return _storage.offset_of(native)

    def storage_numel(self, native):
        return _storage.storage_numel(native)

    def data_ptr(self, native):
        return native.__array_interface__["data"][0]

    def manual_seed(self, seed):
        self._default.manual_seed(seed)

    def create_generator(self, device):
        from flambeau._api_random import DEFAULT_SEED

        return Engine(DEFAULT_SEED)

    def default_generator(self, device):
        return self._default

    def kernels(self) -> Mapping[str, Callable[..., Any]]:
        from .kernels import KERNELS

        return KERNELS

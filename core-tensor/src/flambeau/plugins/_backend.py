"""The contract a backend implements: memory, transfers, devices, and its kernels."""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .._device import device
from .._dtypes import dtype

#: The version of the API between core-tensor and backends and plugins. A plugin states the
#: range of flambeau-core-tensor it works with in its own metadata (``Requires-Dist``);
#: that range is checked before any of its code is imported.
CORE_API_VERSION = "0.1"


class Backend:
    """Base class for a device backend, as returned by a ``flambeau.backends`` entry point's factory.

    A backend's "native" arrays must offer numpy's array attributes ``shape``, ``strides``
    (in bytes), ``dtype`` (a numpy dtype), ``ndim`` and ``size``; ``Tensor`` reads its
    metadata from them directly.

    Subclasses set :attr:`name` (the device type), :attr:`priority`, :attr:`dtypes`, and
    implement the methods below. Kernels are returned by :meth:`kernels`; a kernel for an op
    ``f(input: Tensor, other: TensorOrScalar, *, alpha=1)`` is called as
    ``kernel(input, other, alpha, out=out)``, natives in place of tensors, ``out`` a native
    already allocated with the output's shape and dtype (compute ops) -- see ``flambeau.ops``.
    """

    name: str = ""
    priority: int = 0
    dtypes: frozenset[dtype] = frozenset()

    # -- devices ---------------------------------------------------------------------
    def device_count(self) -> int:
        """How many devices of this type are present."""
        return 1

    def default_index(self) -> int | None:
        """The index a device given without one resolves to (None: devices have no index)."""
        return None

    def synchronize(self, index: int | None = None) -> None:
        """Wait for all work queued on a device to finish."""

    def describe_devices(self) -> list[str]:
        """One line per device for ``python -m flambeau info`` (e.g. a GPU's name, memory and
        compute capability); none by default."""
        return []

    # -- memory ----------------------------------------------------------------------
    def empty(self, shape: tuple[int, ...], dtype: dtype, device: device) -> Any:
        """A new uninitialised native array."""
        raise NotImplementedError

    def full(self, shape: tuple[int, ...], fill_value: Any, dtype: dtype, device: device) -> Any:
        """A new native array with every element set to ``fill_value``."""
        out = self.empty(shape, dtype, device)
        self.fill_(out, fill_value)
        return out

    def fill_(self, native: Any, value: Any) -> None:
        """Set every element of a native array (which may be a strided view) to ``value``."""
        raise NotImplementedError

    def from_numpy(self, array: np.ndarray, device: device) -> Any:
        """Copy a host array to the device (the CPU backend may share memory)."""
        raise NotImplementedError

    def to_numpy(self, native: Any) -> np.ndarray:
        """Copy a native array to the host (the CPU backend returns it as it is)."""
        raise NotImplementedError

    def copy_from_host_(self, dst: Any, array: np.ndarray, non_blocking: bool = False) -> None:
        """Copy the host array ``array`` into the existing native ``dst`` (same shape; dtypes may
        differ, cast as ``copy_`` casts).

        ``non_blocking=True`` allows the copy to return before it completes (a device with
        asynchronous transfers may queue it; the caller must not write to ``array`` until a
        :meth:`synchronize`); a backend may ignore it and copy synchronously. The default builds it
        from :meth:`from_numpy` and :meth:`copy_`, so older backends need not implement it.
        """
        self.copy_(dst, self.from_numpy(np.ascontiguousarray(array), self.device_of(dst)))

    def copy_(self, dst: Any, src: Any) -> None:
        """Copy ``src`` into ``dst`` of the same backend, broadcasting ``src``; dtypes may differ."""
        raise NotImplementedError

    def device_of(self, native: Any) -> device:
        """The device a native array lives on."""
        return device(self.name)

    def storage_offset(self, native: Any) -> int:
        """The offset, in elements, of a native view's first element from its storage's start."""
        return 0

    def storage_numel(self, native: Any) -> int:
        """How many elements the storage under a native view holds (``as_strided`` checks against it)."""
        raise NotImplementedError

    def data_ptr(self, native: Any) -> int:
        """The address of a native's first element."""
        return 0

    # -- randomness ------------------------------------------------------------------
    def manual_seed(self, seed: int) -> None:
        """Seed this backend's default random generators (``seed`` is an int in ``[0, 2**64)``)."""

    def create_generator(self, device: device) -> Any:
        """A new random engine for ``device``: the state behind a ``flambeau.Generator(device)``.

        The engine is the backend's own object; it must offer ``manual_seed(seed)`` (an int in
        ``[0, 2**64)``), ``initial_seed() -> int``, ``get_state() -> np.ndarray`` (1-D uint8, the
        whole state) and ``set_state(state)`` (a state ``get_state`` gave; anything else raises
        RuntimeError). A new engine starts from ``flambeau._api_random.DEFAULT_SEED``, so that runs
        repeat. Random ops' kernels receive their ``generator`` argument as the user passed it:
        None (use :meth:`default_generator`) or a ``flambeau.Generator`` whose ``_native`` attribute
        is the engine this method returned (its device was checked by the op's meta function).
        """
        raise NotImplementedError(f"backend {self.name!r} provides no random generators")

    def default_generator(self, device: device) -> Any:
        """The engine random ops on ``device`` draw from when given no generator (see
        :meth:`create_generator`); :meth:`manual_seed` seeds it."""
        raise NotImplementedError(f"backend {self.name!r} provides no random generators")

    # -- kernels ---------------------------------------------------------------------
    def kernels(self) -> Mapping[str, Callable[..., Any]]:
        """The backend's kernels, by op name."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

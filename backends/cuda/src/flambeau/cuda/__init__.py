"""flambeau.cuda: NVIDIA GPUs, as ``torch.cuda`` offers them (shipped by flambeau-backend-cuda).

Importing this module never touches the GPU and never fails for want of one: CuPy and the driver are
looked for on first use. :func:`is_available` is False, not an error, without CuPy, a driver or a GPU;
:func:`device_count` is then 0, seeding and :func:`empty_cache` do nothing (as PyTorch's, which defer
them until CUDA starts), and everything that needs a device raises PyTorch's error: an
``AssertionError`` naming the extra to install when CuPy is missing ("not compiled with CUDA"), a
``RuntimeError`` when there is no driver or no GPU.

Example::

    >>> import flambeau as fb
    >>> if fb.cuda.is_available():
    ...     x = fb.ones(3, device="cuda")
    ...     fb.cuda.synchronize()
"""
from __future__ import annotations

from typing import Any

from flambeau_cuda._errors import OutOfMemoryError
from flambeau_cuda._runtime import CudaUnavailable, unavailable_reason

from ._streams import Event, Stream, current_stream, default_stream, stream

__all__ = ["OutOfMemoryError", "is_available", "device_count", "current_device", "set_device", "device",
           "get_device_name", "get_device_capability", "get_device_properties", "synchronize", "Stream", "Event",
           "current_stream", "default_stream", "stream", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "mem_get_info",
           "manual_seed", "manual_seed_all", "seed", "initial_seed", "is_initialized", "init"]


def _xp() -> Any:
    """CuPy, or PyTorch's error for what is missing (see the module's docstring)."""
    reason = unavailable_reason()
    if reason is None:
        from flambeau_cuda._runtime import array_module

        return array_module()
    if reason.kind == "no-cupy":
        raise AssertionError(str(reason))
    raise RuntimeError(str(reason)) from reason


def _index(device: Any = None, optional: bool = True) -> int:
    """A device index from an int, ``"cuda:1"``, a ``flambeau.device`` or None (the current device)."""
    import flambeau as fb

    if device is None or (isinstance(device, int) and device == -1 and optional):
        return current_device()
    if isinstance(device, str):
        device = fb.device(device)
    if isinstance(device, fb.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return current_device() if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise ValueError(f"Expected a cuda device, an int or None, but got: {device!r}")


def _checked(index: int) -> int:
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal {index}: there {'is' if count == 1 else 'are'} "
                           f"{count} CUDA device{'' if count == 1 else 's'} "
                           f"({', '.join(f'cuda:{k}' for k in range(count))})")
    return index


def _backend() -> Any | None:
    """The loaded ``cuda`` backend, or None when it cannot load (its error comes from :func:`_xp`)."""
    import flambeau as fb

    try:
        return fb.plugins.loaded_backend("cuda")
    except fb.plugins.BackendUnavailable:
        return None


# -- availability and devices ---------------------------------------------------------------

def is_available() -> bool:
    """Whether a CUDA GPU can be used: CuPy installed, a driver, and at least one device."""
    return unavailable_reason() is None


def is_initialized() -> bool:
    """Whether CUDA has been found usable in this process (flambeau starts it on first use)."""
    return is_available()


def init() -> None:
    """Start CUDA now rather than on first use; raises if it cannot (see the module's docstring)."""
    _xp()


def device_count() -> int:
    """How many GPUs there are (0 without CuPy, a driver or a GPU)."""
    if not is_available():
        return 0
    return int(_xp().cuda.runtime.getDeviceCount())


def current_device() -> int:
    """The index of the GPU that new ``"cuda"`` tensors go to."""
    return int(_xp().cuda.runtime.getDevice())


def set_device(device: Any) -> None:
    """Make ``device`` the current GPU (a negative index does nothing, as PyTorch's)."""
    xp = _xp()
    if isinstance(device, int) and device < 0:
        return
    xp.cuda.Device(_checked(_index(device))).use()


class device:  # noqa: N801 - PyTorch's name
    """Context manager making ``device`` the current GPU; ``None`` or -1 changes nothing.

    Example::

        >>> with fb.cuda.device(1):
        ...     x = fb.zeros(3, device="cuda")   # on cuda:1
    """

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device, optional=True)
        self._inner: Any = None

    def __enter__(self) -> "device":
        if self.idx >= 0:
            self._inner = _xp().cuda.Device(_checked(self.idx))
            self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._inner is not None:
            self._inner.__exit__(*exc)
            self._inner = None


class _DeviceProperties:
    """What :func:`get_device_properties` returns (PyTorch's field names)."""

    def __init__(self, raw: dict) -> None:
        name = raw.get("name", b"")
        self.name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        self.major = int(raw.get("major", 0))
        self.minor = int(raw.get("minor", 0))
        self.total_memory = int(raw.get("totalGlobalMem", 0))
        self.multi_processor_count = int(raw.get("multiProcessorCount", 0))
        uuid = raw.get("uuid", b"")
        self.uuid = uuid.hex() if isinstance(uuid, bytes) else str(uuid)

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _DeviceProperties:
    """Name, compute capability, memory and multiprocessor count of a GPU."""
    xp = _xp()
    return _DeviceProperties(xp.cuda.runtime.getDeviceProperties(_checked(_index(device))))


def get_device_name(device: Any = None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H200'``."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability as ``(major, minor)``."""
    p = get_device_properties(device)
    return p.major, p.minor


def synchronize(device: Any = None) -> None:
    """Wait until every kernel queued on the GPU has finished."""
    xp = _xp()
    xp.cuda.Device(_checked(_index(device))).synchronize()


# -- memory -----------------------------------------------------------------------------------

def _pool_used(index: int) -> int:
    xp = _xp()
    with xp.cuda.Device(_checked(index)):
        return int(xp.get_default_memory_pool().used_bytes())


def memory_allocated(device: Any = None) -> int:
    """Bytes occupied by tensors on the GPU (CuPy's memory pool's bytes in use)."""
    return _pool_used(_index(device))


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since the start or :func:`reset_peak_memory_stats`."""
    index = _index(device)
    used = _pool_used(index)
    backend = _backend()
    peak = backend.memory.peak.get(index, 0) if backend is not None else 0
    return max(peak, used)


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver (in use or cached)."""
    xp = _xp()
    with xp.cuda.Device(_checked(_index(device))):
        return int(xp.get_default_memory_pool().total_bytes())


max_memory_reserved = memory_reserved  # CuPy's pool keeps what it took until empty_cache


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart the peak that :func:`max_memory_allocated` reports from the bytes in use now."""
    index = _index(device)
    used = _pool_used(index)
    backend = _backend()
    if backend is not None:
        backend.memory.peak[index] = used


def empty_cache() -> None:
    """Give the cached, unused GPU memory back to the driver (nothing to do without CUDA)."""
    if not is_available():
        return
    _xp().get_default_memory_pool().free_all_blocks()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU, as the driver reports them."""
    xp = _xp()
    with xp.cuda.Device(_checked(_index(device))):
        free, total = xp.cuda.runtime.memGetInfo()
    return int(free), int(total)


# -- random numbers ---------------------------------------------------------------------------

def manual_seed(seed: int) -> None:
    """Seed the current GPU's default generator (nothing to do without CUDA, as PyTorch's)."""
    backend = _backend() if is_available() else None
    if backend is not None:
        from flambeau._api_random import _seed_value

        backend.default_generator(None).manual_seed(_seed_value(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's default generator (nothing to do without CUDA, as PyTorch's)."""
    backend = _backend() if is_available() else None
    if backend is not None:
        from flambeau._api_random import _seed_value

        backend.manual_seed(_seed_value(seed))


def seed() -> None:
    """Seed the current GPU's default generator from a non-deterministic source."""
    import secrets

    manual_seed(secrets.randbits(63))


def initial_seed() -> int:
    """The seed of the current GPU's default generator."""
    _xp()
    backend = _backend()
    return backend.default_generator(None).initial_seed() if backend is not None else 0


# A private name kept for code written against torch.cuda's internals.
_CudaUnavailable = CudaUnavailable

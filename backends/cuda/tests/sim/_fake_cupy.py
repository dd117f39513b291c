"""TEST DOUBLE: a small stand-in for the parts of CuPy's API that flambeau_cuda uses, over numpy.

It exists so that CI, which has no GPU, runs every line of flambeau_cuda (storage, views, kernels,
host copies, random engines, flambeau.cuda's bookkeeping) against the conformance kit. It is never
importable as ``cupy``: it lives in the tests' ``sim`` folder under the name ``_fake_cupy``, and only
the test session puts that folder on ``sys.path``.

What it models from CuPy: arrays are an ``ndarray`` type of their own (never numpy's), built as
``ndarray(shape, dtype, memptr=..., strides=...)`` over a ``Memory`` reached through ``a.data.mem``;
``asarray``/``asnumpy``/``ndarray.set`` are the only ways across the host boundary; random numbers
come from ``random.Generator(random.Philox4x3210(seed))``; ``cuda`` has devices, streams, events and a
memory pool. What it does not model: CuPy's own kernels (numpy computes), several devices (one), the
asynchrony of streams, and CuPy's refusal of implicit host conversions (numpy accepts its subclass).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import scipy.special as _scipy_special

#: What flambeau_cuda checks where the double cannot stand in for a GPU (half-precision matmul).
IS_TEST_DOUBLE = True

# -- memory --------------------------------------------------------------------------------


class Memory:
    """One allocation: its address, size in bytes, and the numpy buffer standing in for device memory."""

    def __init__(self, buf: np.ndarray) -> None:
        self._buf = buf
        self.ptr = buf.__array_interface__["data"][0] if buf.size else 0
        self.size = buf.nbytes

    @classmethod
    def of(cls, root: np.ndarray) -> "Memory":
        return cls(root)


class MemoryPointer:
    """CuPy's ``MemoryPointer``: a Memory and a byte offset into it."""

    def __init__(self, mem: Memory, offset: int) -> None:
        self.mem = mem
        self.ptr = mem.ptr + offset
        self._offset = offset

    def __add__(self, nbytes: int) -> "MemoryPointer":
        return MemoryPointer(self.mem, self._offset + int(nbytes))

    def copy_from_device(self, src: "MemoryPointer", size: int) -> None:
        dst_bytes = self.mem._buf.reshape(-1).view(np.uint8)
        src_bytes = src.mem._buf.reshape(-1).view(np.uint8)
        dst_bytes[self._offset:self._offset + size] = src_bytes[src._offset:src._offset + size]


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class _Device:
    def __init__(self, index: int = 0) -> None:
        if not 0 <= int(index) < _DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {index}")
        self.id = int(index)
        self._previous: list[int] = []

    def __enter__(self) -> "_Device":
        self._previous.append(_state["device"])
        _state["device"] = self.id
        return self

    def __exit__(self, *exc: Any) -> None:
        _state["device"] = self._previous.pop()

    def synchronize(self) -> None:
        _state["synchronized"] += 1

    @property
    def compute_capability(self) -> str:
        return "90"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self) -> int:
        return self.id


class ndarray(np.ndarray):  # noqa: N801 - CuPy's name
    """The double's device array: numpy's, as a type of its own, with CuPy's ``data``/``device``/``set``."""

    def __new__(cls, shape, dtype=float, memptr: MemoryPointer | None = None, strides=None):
        if memptr is None:
            return _wrap(np.empty(shape, dtype))
        return np.ndarray.__new__(cls, shape, dtype, buffer=memptr.mem._buf.reshape(-1).view(np.uint8),
                                  offset=memptr._offset, strides=strides)

    @property
    def data(self) -> MemoryPointer:  # type: ignore[override]
        root = _root(self)
        mem = Memory.of(root)
        return MemoryPointer(mem, self.__array_interface__["data"][0] - mem.ptr if self.size else 0)

    @property
    def device(self) -> _Device:  # type: ignore[override]
        return _Device(0)

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        np.copyto(self, np.asarray(arr))

    def get(self, stream: Any = None) -> np.ndarray:
        return asnumpy(self)


def _wrap(value: Any) -> Any:
    """numpy's results as the double's arrays (scalars stay scalars, as CuPy's reductions give 0-d arrays)."""
    if isinstance(value, np.ndarray) and not isinstance(value, ndarray):
        return value.view(ndarray)
    if isinstance(value, np.generic):
        return np.asarray(value).view(ndarray)
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


class _Function:
    """A numpy function or ufunc whose array results are the double's arrays (``.at`` etc. forwarded)."""

    def __init__(self, fn: Any) -> None:
        self._fn = fn
        self.__name__ = getattr(fn, "__name__", "function")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):  # CuPy never warns about floating-point exceptions
            return _wrap(self._fn(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._fn, name)
        return _Function(attr) if callable(attr) else attr


_pool_used = [0]


def _track(buf: np.ndarray) -> None:
    _pool_used[0] += buf.nbytes
    weakref.finalize(buf, _release, buf.nbytes)


def _release(nbytes: int) -> None:
    _pool_used[0] -= nbytes


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError``: an allocation beyond the double's 16 GiB "device"."""


_CAPACITY = 16 * 1024 ** 3


def empty(shape, dtype=float) -> ndarray:
    n = int(np.prod(shape, dtype=np.int64)) if np.ndim(shape) else int(shape)
    if n * np.dtype(dtype).itemsize > _CAPACITY - _pool_used[0]:
        raise OutOfMemoryError(f"Out of memory allocating {n * np.dtype(dtype).itemsize:,} bytes")
    buf = np.empty(shape, dtype)
    _track(buf)
    return buf.view(ndarray)


def asarray(a: Any, dtype: Any = None, blocking: bool = True) -> ndarray:
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    host = np.array(a, dtype=dtype, copy=True)  # host to "device": always a copy
    out = empty(host.shape, host.dtype)
    np.copyto(out, host)
    return out


def asnumpy(a: Any, stream: Any = None, blocking: bool = True) -> np.ndarray:
    if isinstance(a, ndarray):
        return np.array(a.view(np.ndarray), copy=True)
    return np.asarray(a)


def from_dlpack(x: Any) -> ndarray:
    return np.from_dlpack(x).view(ndarray)


def copyto(dst: ndarray, src: Any, casting: str = "same_kind") -> None:
    if not isinstance(dst, ndarray):
        raise TypeError("copyto: the destination must be a device array")
    if isinstance(src, np.ndarray) and not isinstance(src, ndarray):
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")  # CuPy refuses host arrays here
    with np.errstate(all="ignore"):
        np.copyto(dst, src, casting=casting)


class _Submodule:
    """A numpy submodule (``fft``, ``linalg``) whose functions give the double's arrays."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        return _Function(attr) if callable(attr) else attr


fft = _Submodule(np.fft)


def __getattr__(name: str) -> Any:
    """Every other name: numpy's, wrapped (dtypes and constants as they are)."""
    attr = getattr(np, name)
    if callable(attr) and not isinstance(attr, type):
        return _Function(attr)
    return attr


# -- scipy.special (cupyx.scipy.special on a GPU) --------------------------------------------


class _Special:
    def __getattr__(self, name: str) -> Any:
        return _Function(getattr(_scipy_special, name))


_special = _Special()

# -- random ------------------------------------------------------------------------------------


class _Generator:
    """CuPy's ``random.Generator`` over a bit generator: results are device arrays."""

    def __init__(self, bit_generator: Any) -> None:
        self._gen = np.random.Generator(bit_generator)

    def random(self, size=None, dtype=np.float64) -> ndarray:
        return _wrap(np.asarray(self._gen.random(size, dtype=dtype)))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False) -> ndarray:
        return _wrap(np.asarray(self._gen.integers(low, high, size=size, dtype=dtype, endpoint=endpoint)))

    def standard_normal(self, size=None, dtype=np.float64) -> ndarray:
        return _wrap(np.asarray(self._gen.standard_normal(size, dtype=dtype)))


class random:  # noqa: N801 - CuPy's submodule name
    Generator = _Generator

    @staticmethod
    def Philox4x3210(seed: int) -> Any:  # noqa: N802 - CuPy's name
        return np.random.Philox(int(seed))


# -- cuda: devices, streams, events, memory pool ------------------------------------------------

_DEVICE_COUNT = 1
_state = {"device": 0, "synchronized": 0}


class _Stream:
    null: "_Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False, priority: int = 0):
        self.ptr = 0 if null else id(self)
        self.priority = priority
        self._previous: list[_Stream] = []

    def __enter__(self) -> "_Stream":
        self._previous.append(_streams["current"])
        _streams["current"] = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _streams["current"] = self._previous.pop()

    def use(self) -> "_Stream":
        _streams["current"] = self
        return self

    def synchronize(self) -> None:
        _state["synchronized"] += 1

    def query(self) -> bool:
        return True

    def wait_event(self, event: "_Event") -> None:
        pass

    def record(self, event: "_Event | None" = None) -> "_Event":
        event = event or _Event()
        event.record(self)
        return event


_Stream.null = _Stream(null=True)
_streams = {"current": _Stream.null}


class _Event:
    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.disable_timing = disable_timing
        self.time: float | None = None
        self.done = True

    def record(self, stream: Any = None) -> None:
        import time

        self.time = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True


def _elapsed(start: _Event, end: _Event) -> float:
    if start.time is None or end.time is None:
        raise RuntimeError("cudaErrorInvalidResourceHandle: an event was not recorded")
    if start.disable_timing or end.disable_timing:
        raise RuntimeError("cudaErrorInvalidResourceHandle: timing is disabled on an event")
    return (end.time - start.time) * 1000.0


class _Pool:
    def used_bytes(self) -> int:
        return _pool_used[0]

    def total_bytes(self) -> int:
        return _pool_used[0]

    def free_all_blocks(self) -> None:
        pass


_POOL = _Pool()


def get_default_memory_pool() -> _Pool:
    return _POOL


class _Runtime:
    @staticmethod
    def getDeviceCount() -> int:  # noqa: N802 - CUDA's names
        return _DEVICE_COUNT

    @staticmethod
    def getDevice() -> int:  # noqa: N802
        return _state["device"]

    @staticmethod
    def getDeviceProperties(index: int) -> dict:  # noqa: N802
        _Device(index)
        return {"name": b"Fake GPU (numpy test double)", "totalGlobalMem": _CAPACITY, "major": 9, "minor": 0,
                "multiProcessorCount": 1, "uuid": b"\0" * 16}

    @staticmethod
    def driverGetVersion() -> int:  # noqa: N802
        return 13000

    @staticmethod
    def runtimeGetVersion() -> int:  # noqa: N802
        return 13000

    @staticmethod
    def memGetInfo() -> tuple[int, int]:  # noqa: N802
        return _CAPACITY - _pool_used[0], _CAPACITY


class _MemoryModule:
    OutOfMemoryError = OutOfMemoryError


class cuda:  # noqa: N801 - CuPy's submodule name
    memory = _MemoryModule
    Device = _Device
    Stream = _Stream
    Event = _Event
    MemoryPointer = MemoryPointer
    runtime = _Runtime

    @staticmethod
    def get_current_stream() -> _Stream:
        return _streams["current"]

    @staticmethod
    def get_elapsed_time(start: _Event, end: _Event) -> float:
        return _elapsed(start, end)


__all__ = ["ndarray", "empty", "asarray", "asnumpy", "copyto", "from_dlpack", "random", "cuda",
           "get_default_memory_pool"]

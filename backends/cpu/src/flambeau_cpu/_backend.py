"""The CPU backend: numpy arrays as storage, C++ and numpy kernels."""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from flambeau import _dtypes
from flambeau.plugins import Backend

from . import _random, _storage

# Bound once: numpy's module __getattr__ keeps ``np.empty`` from Python's attribute cache, and the
# allocator runs for every op's result.
_np_empty = np.empty


def allocation_error(shape: tuple[int, ...], dtype: _dtypes.dtype, exc: BaseException) -> Exception:
    """PyTorch's error for a tensor numpy could not allocate (numpy's own words name its internals)."""
    if isinstance(exc, MemoryError):
        nbytes = dtype.itemsize
        for s in shape:
            nbytes *= s
        return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
                            "Error code 12 (Cannot allocate memory)")
    if len(shape) > 64:  # numpy's limit, which PyTorch does not have: say so rather than pretend
        return RuntimeError(f"flambeau's CPU backend supports at most 64 dimensions (numpy's limit), got {len(shape)}")
    return RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")


class CpuBackend(Backend):
    """Tensors in host memory, held as numpy arrays."""

    name = "cpu"
    priority = 0
    dtypes = frozenset(_dtypes.ALL_DTYPES)
    dlpack_device_type = 1  # kDLCPU

    @property
    def generator(self) -> np.random.Generator:
        """The default engine's numpy generator (what the CPU's random kernels draw from by default)."""
        return _random.DEFAULT.numpy

    def empty(self, shape: tuple[int, ...], dtype: _dtypes.dtype, device: Any) -> np.ndarray:
        np_dtype = dtype._np
        try:  # (a try costs nothing until it raises: this runs for every op's result)
            return _np_empty(shape, np_dtype if np_dtype is not None else dtype.numpy_dtype)
        except (ValueError, MemoryError, OverflowError) as exc:
            raise allocation_error(shape, dtype, exc) from None

    def full(self, shape, fill_value, dtype, device):
        if hasattr(fill_value, "_data"):
            fill_value = fill_value.item()
        out = self.empty(shape, dtype, device)
        out.fill(fill_value)
        return out

    def fill_(self, native: np.ndarray, value: Any) -> None:
        native[...] = value

    def from_numpy(self, array: np.ndarray, device: Any) -> np.ndarray:
        return array

    def to_numpy(self, native: np.ndarray) -> np.ndarray:
        return native

    def copy_(self, dst: np.ndarray, src: np.ndarray) -> None:
        np.copyto(dst, src, casting="unsafe")

    def from_dlpack(self, obj: Any) -> np.ndarray:
        return np.from_dlpack(obj)

    def storage_offset(self, native: np.ndarray) -> int:
        return _storage.storage_offset(native)

    def storage_numel(self, native: np.ndarray) -> int:
        return _storage.storage_numel(native)

    def data_ptr(self, native: np.ndarray) -> int:
        return native.__array_interface__["data"][0]

    def manual_seed(self, seed: int) -> None:
        _random.DEFAULT.manual_seed(seed)

    def create_generator(self, device: Any) -> _random.CpuGenerator:
        return _random.CpuGenerator()

    def default_generator(self, device: Any) -> _random.CpuGenerator:
        return _random.DEFAULT

    def set_num_threads(self, n: int) -> None:
        from . import _C, _threads

        _C.set_num_threads(n)
        _threads.set_blas_threads(n)  # OpenBLAS splits its work into as many jobs as its own count

    def get_num_threads(self) -> int:
        from . import _C

        return _C.get_num_threads()

    def kernels(self) -> Mapping[str, Callable[..., Any]]:
        from .kernels import all_kernels

        return all_kernels()

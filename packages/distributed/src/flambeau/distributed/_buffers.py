"""From flambeau tensors to the contiguous host buffers the engine reads and writes, without copies
where the tensor is already contiguous, and with a copy back for non-contiguous outputs."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from flambeau import Tensor

_NOOP: Callable[[], None] = lambda: None  # noqa: E731


def check_tensor(t: Any, what: str, name: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {name} must be a flambeau.Tensor, got {type(t).__name__}")
    return t


def check_tensor_list(ts: Any, what: str, name: str) -> list[Tensor]:
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"{what}: {name} must be a list of tensors, got {type(ts).__name__}")
    return [check_tensor(t, what, f"{name}[{i}]") for i, t in enumerate(ts)]


def host(t: Tensor, what: str) -> np.ndarray:
    """The tensor's own numpy storage (shared memory, not a copy); CPU tensors only."""
    if t.device.type != "cpu":
        raise ValueError(f"{what}: the 'mpi' backend takes CPU tensors, got one on {t.device} "
                         "(use the 'nccl' backend for cuda tensors)")
    if t._conj:
        raise ValueError(f"{what}: resolve the conjugate bit first (tensor.resolve_conj())")
    return t._data


def readable(t: Tensor, what: str) -> np.ndarray:
    """A contiguous array with the tensor's elements: the storage itself when it is contiguous."""
    a = host(t, what)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def writable(t: Tensor, what: str) -> tuple[np.ndarray, Callable[[], None]]:
    """A contiguous array to receive into, and what copies it into the tensor afterwards (nothing when
    the array is the tensor's storage itself)."""
    a = host(t, what)
    if a.flags.c_contiguous:
        return a, lambda: bump(t)
    buf = np.ascontiguousarray(a)

    def back() -> None:
        a[...] = buf
        bump(t)

    return buf, back


def bump(t: Tensor) -> None:
    """The tensor changed in place: bump its version counter, as an in-place op does."""
    t._version_counter[0] += 1


def store_into(t: Tensor, values: np.ndarray) -> None:
    """Copy ``values`` (same number of elements) into the tensor's storage."""
    a = t._data
    a[...] = values.reshape(a.shape)
    bump(t)

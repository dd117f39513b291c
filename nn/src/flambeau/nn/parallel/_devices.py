"""Which accelerator DataParallel spreads over, and how device ids name its devices."""
from __future__ import annotations

from typing import Any

import flambeau


def accelerator() -> tuple[str, int] | None:
    """The accelerator device type and its device count, or None on a CPU-only installation.

    Like PyTorch, DataParallel uses CUDA devices when there are any; flambeau's CUDA backend is a
    separate distribution (flambeau-backend-cuda), so an installation without it has none.
    """
    from flambeau.plugins import backends, loaded_backend

    if not any(record.name == "cuda" for record in backends()):
        return None
    try:
        count = loaded_backend("cuda").device_count()
    except Exception:  # installed but unusable (no driver): PyTorch's "no GPU" case
        return None
    return ("cuda", count) if count > 0 else None


def device_of(d: Any) -> flambeau.device:
    """A device from an index on the accelerator (-1: the CPU), a string or a device."""
    if isinstance(d, flambeau.device):
        return d
    if isinstance(d, str):
        return flambeau.device(d)
    if isinstance(d, int) and not isinstance(d, bool):
        if d < 0:
            return flambeau.device("cpu")
        acc = accelerator()
        if acc is None:
            raise RuntimeError(f"device id {d} names an accelerator device, but none is available")
        return flambeau.device(acc[0], d)
    raise TypeError(f"expected a device, a device string or an int device id, got {type(d).__name__}")


def device_index(d: Any, device_type: str, count: int) -> int:
    """The index of device ``d`` (an int, string or device) on ``device_type``, checked to exist."""
    if isinstance(d, bool):
        raise TypeError(f"expected an int device id or a device, got {d!r}")
    if isinstance(d, int):
        index = d
    else:
        dev = d if isinstance(d, flambeau.device) else flambeau.device(d)
        if dev.type != device_type:
            raise ValueError(f"Expected a {device_type} device, but got: {dev}")
        index = dev.index if dev.index is not None else 0
    if not 0 <= index < count:
        raise RuntimeError(f"Invalid device id {d!r}: {count} {device_type} device(s) available "
                           f"(ids 0 to {count - 1})")
    return index

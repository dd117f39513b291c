"""The errors flambeau.cuda raises beyond Python's own."""
from __future__ import annotations


class OutOfMemoryError(RuntimeError):
    """A GPU allocation failed: the message names the size asked for and the memory free.

    The failed allocation leaves nothing behind: the process stays usable (free tensors, call
    ``flambeau.cuda.empty_cache()``, and try again).
    """


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} bytes"


def out_of_memory(asked: int, index: int, free: int, total: int, reserved: int) -> OutOfMemoryError:
    """PyTorch's wording (c10/cuda/CUDACachingAllocator), with flambeau's allocator named."""
    return OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {_size(asked)}. GPU {index} has a total capacity of {_size(total)} "
        f"of which {_size(free)} is free. Of the allocated memory {_size(reserved)} is reserved by CuPy's memory "
        f"pool. Freeing tensors and calling flambeau.cuda.empty_cache() returns cached memory to the driver.")

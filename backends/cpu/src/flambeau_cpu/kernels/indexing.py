"""numpy kernels for advanced indexing (integer tensors and boolean masks)."""
from __future__ import annotations

from typing import Any, Callable

KERNELS: dict[str, Callable[..., Any]] = {}

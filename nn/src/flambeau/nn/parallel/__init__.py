"""flambeau.nn.parallel: DataParallel and its helpers, and DistributedDataParallel (torch.nn.parallel's API).

``DistributedDataParallel`` lives in the separately installed ``flambeau-distributed``; it is looked
up when first used, so this package works without it.
"""
from __future__ import annotations

from typing import Any

from .data_parallel import DataParallel, data_parallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]


def __getattr__(name: str) -> Any:
    if name == "DistributedDataParallel":
        try:
            import flambeau.distributed as dist
        except ModuleNotFoundError as exc:
            if exc.name not in ("flambeau.distributed", "flambeau"):
                raise
            raise ImportError("flambeau.nn.parallel.DistributedDataParallel is provided by flambeau-distributed, "
                              "which is not installed: pip install flambeau-distributed") from exc
        return dist.DistributedDataParallel
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")

"""``ReduceOp``, ``Backend`` and the errors of flambeau.distributed, as torch.distributed names them."""
from __future__ import annotations

import enum
from datetime import timedelta

# PyTorch's defaults: 30 minutes for every backend but NCCL's 10.
default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = timedelta(minutes=10)


class DistError(RuntimeError):
    """The base of the errors raised by flambeau.distributed (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication engine failed (a peer died, a message did not fit)."""


class DistNetworkError(DistError):
    """A store or rendezvous could not reach its peer."""


class DistStoreError(DistError):
    """A store operation failed or timed out."""


class ReduceOp(enum.Enum):
    """The reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter``: ``dist.ReduceOp.SUM`` etc.

    ``BAND``, ``BOR`` and ``BXOR`` take integer and bool tensors only; ``AVG`` divides the sum by the
    group's size (truncating toward zero for integers, as NCCL does).
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}: {list(ReduceOp).index(self)}>"


# torch also exposes them as ``dist.reduce_op`` (deprecated).
reduce_op = ReduceOp


class Backend(str):
    """A backend name: ``Backend("mpi") == Backend.MPI == "mpi"``; unknown names raise ValueError."""

    UNDEFINED = "undefined"
    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"  # named so that scripts written for PyTorch read; flambeau runs CPU work on MPI
    backend_list = [UNDEFINED, MPI, NCCL]
    default_device_backend_map = {"cpu": MPI, "cuda": NCCL}

    def __new__(cls, name: str) -> "Backend":
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got {type(name).__name__}")
        value = name.lower()
        if value == cls.GLOO:
            raise ValueError("flambeau.distributed has no gloo backend: use 'mpi' for CPU tensors "
                             "(pip install mpi4py mpich) or 'nccl' for cuda tensors")
        if value not in cls.backend_list:
            raise ValueError(f"Invalid backend: '{name}'; flambeau.distributed has 'mpi' and 'nccl'")
        return super().__new__(cls, value)

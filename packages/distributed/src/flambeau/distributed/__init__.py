"""flambeau.distributed: training across processes and machines (``torch.distributed``'s API).

Communication runs on MPI through mpi4py (``pip install mpi4py mpich``) for CPU tensors, and on NCCL
through CuPy for cuda tensors. Start a job with ``flambeau run --nproc-per-node N script.py`` (or
``python -m flambeau.distributed.run``, or ``mpiexec -n N python script.py``); in the script::

    import flambeau.distributed as dist
    dist.init_process_group()            # ranks from the launcher
    model = dist.DistributedDataParallel(model)
"""
from __future__ import annotations

from ._c10d import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_default_store,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from ._collectives import (
    P2POp,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
)
from ._ddp import DistributedDataParallel
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore
from ._types import (
    Backend,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    ReduceOp,
    default_pg_timeout,
    reduce_op,
)
from ._version import __version__
from ._work import Work

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "DistributedDataParallel",
    "FileStore", "GroupMember", "HashStore", "P2POp", "PrefixStore", "ProcessGroup", "ReduceOp", "Store",
    "TCPStore", "Work", "__version__", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce",
    "all_to_all", "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend", "get_default_store",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "isend", "new_group", "recv", "reduce", "reduce_op",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]

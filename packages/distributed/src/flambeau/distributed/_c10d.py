"""Process groups: ``init_process_group``, ``new_group``, the default group and its queries.

Rank discovery. Under ``mpiexec`` (or ``flambeau run``, which starts its workers through ``mpiexec``
for the mpi backend) MPI knows every rank, so ``init_process_group()`` needs no argument; a rank,
world size or ``RANK``/``WORLD_SIZE`` variable that disagrees with MPI is an error, and so is a
WORLD_SIZE above 1 in a process that MPI started alone (it was not launched by mpiexec: it would
otherwise wait forever for peers that MPI cannot reach). NCCL ranks rendezvous through a store
(``env://``, ``tcp://host:port`` or ``file://path``), or through MPI when it is there.
"""
from __future__ import annotations

import os
import urllib.parse
from datetime import timedelta
from typing import Any, Sequence

from . import _mpi
from ._store import FileStore, Store, TCPStore
from ._types import Backend, default_pg_nccl_timeout, default_pg_timeout

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


class ProcessGroup:
    """A set of ranks that communicate together: the default group (``group.WORLD``) or one made by
    ``new_group``. It routes CPU tensors to its MPI communicator and cuda tensors to NCCL."""

    def __init__(self, backend: str, ranks: Sequence[int], cpu: Any = None, cuda: Any = None,
                 timeout: timedelta = default_pg_timeout, name: str = "") -> None:
        self._backend = backend
        self._ranks = list(ranks)
        self._cpu = cpu
        self._cuda = cuda
        self._timeout = timeout
        self.group_name = name
        impl = cpu if cpu is not None else cuda
        self._rank = impl.rank()
        self._size = impl.size()

    def rank(self) -> int:
        """This process's rank within the group."""
        return self._rank

    def size(self) -> int:
        """The number of ranks in the group."""
        return self._size

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return f"<ProcessGroup {self._backend} ranks={self._ranks} rank={self._rank}>"

    def impl(self, device_type: str, what: str) -> Any:
        """The engine for tensors on ``device_type``."""
        if device_type == "cpu" and self._cpu is not None:
            return self._cpu
        if device_type == "cuda" and self._cuda is not None:
            return self._cuda
        raise ValueError(f"{what}: the process group's backend '{self._backend}' cannot communicate "
                         f"{device_type} tensors (mpi: CPU tensors; nccl: cuda tensors)")

    def any_impl(self) -> Any:
        return self._cpu if self._cpu is not None else self._cuda

    def group_rank(self, global_rank: int, what: str, arg: str) -> int:
        if not isinstance(global_rank, int) or isinstance(global_rank, bool):
            raise TypeError(f"{what}: {arg} must be an int rank, got {type(global_rank).__name__}")
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what}: global rank {global_rank} is not part of the group (ranks "
                             f"{self._ranks})") from None


class _NonMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` (the default group) and ``GroupMember.NON_GROUP_MEMBER``, what ``new_group``
    returns on ranks it leaves out."""

    NON_GROUP_MEMBER: Any = _NonMember()
    WORLD: Any = None


class _WorldMeta(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:  # noqa: N802 - PyTorch's name
        return _STATE.world


class group(metaclass=_WorldMeta):  # noqa: N801 - PyTorch's name: ``dist.group.WORLD``
    """``dist.group.WORLD``: the default process group (None before ``init_process_group``)."""


class _State:
    def __init__(self) -> None:
        self.world: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.store: Store | None = None


_STATE = _State()


def is_available() -> bool:
    """Whether flambeau.distributed can be used (always: the package is installed)."""
    return True


def is_mpi_available() -> bool:
    """Whether the mpi backend's library (mpi4py with an MPI) is installed."""
    return _mpi.is_available()


def is_nccl_available() -> bool:
    """Whether the nccl backend can run (CuPy with NCCL and a GPU)."""
    from . import _process_group_nccl

    return _process_group_nccl.is_available()


def is_gloo_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether the default process group has been initialized."""
    return _STATE.world is not None


def is_torchelastic_launched() -> bool:
    return "TORCHELASTIC_RUN_ID" in os.environ


def _default_backend() -> str:
    if is_mpi_available():
        return Backend.MPI
    if is_nccl_available():
        return Backend.NCCL
    raise RuntimeError(f"init_process_group: no backend is installed: {_mpi.INSTALL_HINT} for the mpi backend "
                       "(CPU tensors), or CuPy with NCCL for cuda tensors")


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"the environment variable {name} must be an integer, got {value!r}") from None


def _parse_init_method(init_method: str | None) -> tuple[str, dict[str, Any]]:
    """``("env" | "tcp" | "file", fields)`` from an init_method URL (PyTorch's forms)."""
    if init_method is None or init_method == "env://":
        return "env", {}
    if not isinstance(init_method, str):
        raise TypeError(f"init_method must be a string URL, got {type(init_method).__name__}")
    url = urllib.parse.urlparse(init_method)
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
    if url.scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"init_method {init_method!r}: tcp:// needs a host and a port (tcp://10.1.1.20:23456)")
        return "tcp", {"host": url.hostname, "port": url.port, **query}
    if url.scheme == "file":
        path = url.path if not url.netloc else url.netloc + url.path
        if not path:
            raise ValueError(f"init_method {init_method!r}: file:// needs a path (file:///shared/rendezvous)")
        return "file", {"path": path, **query}
    if url.scheme == "env":
        return "env", query
    raise ValueError(f"init_method {init_method!r}: unknown scheme '{url.scheme}' (use env://, tcp:// or file://)")


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Store | None = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Initialize the default process group (PyTorch's ``init_process_group``).

    Args:
        backend: ``"mpi"`` (CPU tensors, through mpi4py), ``"nccl"`` (cuda tensors, through CuPy), or
            None: mpi when mpi4py is installed (plus nccl for cuda tensors where it runs), else nccl.
        init_method: ``"env://"`` (the default: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE),
            ``"tcp://host:port"`` or ``"file:///path"``. The mpi backend takes its ranks from MPI and only
            checks that these agree; nccl exchanges its unique id through them.
        timeout: how long a collective may wait for its peers before it raises (default 30 minutes,
            10 for nccl).
        world_size, rank: checked against MPI for the mpi backend; needed by nccl without MPI.
        store: a store to rendezvous through instead of ``init_method``.
    """
    if _STATE.world is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if init_method is not None and store is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    name = _default_backend() if backend is None else Backend(backend)
    pg_timeout = timeout or (default_pg_nccl_timeout if name == Backend.NCCL else default_pg_timeout)
    scheme, fields = _parse_init_method(init_method)
    if rank == -1 and "rank" in fields:
        rank = int(fields["rank"])
    if world_size == -1 and "world_size" in fields:
        world_size = int(fields["world_size"])
    if world_size == -1:
        world_size = _env_int("WORLD_SIZE") if scheme == "env" and _env_int("WORLD_SIZE") is not None else -1
    if rank == -1:
        rank = _env_int("RANK") if scheme == "env" and _env_int("RANK") is not None else -1

    if name == Backend.MPI:
        cpu = _init_mpi(world_size, rank, pg_timeout)
        cuda = None
        if backend is None and is_nccl_available():
            from ._process_group_nccl import ProcessGroupNCCL

            cuda = ProcessGroupNCCL.from_mpi(cpu, pg_timeout)
        pg = ProcessGroup(name if cuda is None else "cpu:mpi,cuda:nccl", range(cpu.size()), cpu=cpu, cuda=cuda,
                          timeout=pg_timeout, name=group_name or "0")
    else:
        from ._process_group_nccl import ProcessGroupNCCL

        if store is None:
            store = _store_for(scheme, fields, world_size, rank, pg_timeout)
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"init_process_group('nccl'): rank {rank} and world_size {world_size} must satisfy "
                             "0 <= rank < world_size (set RANK and WORLD_SIZE, or pass them)")
        cuda = ProcessGroupNCCL.from_store(store, rank, world_size, pg_timeout)
        pg = ProcessGroup(name, range(world_size), cuda=cuda, timeout=pg_timeout, name=group_name or "0")
        _STATE.store = store
    _STATE.world = pg
    GroupMember.WORLD = pg
    _STATE.groups = [pg]


def _init_mpi(world_size: int, rank: int, timeout: timedelta) -> Any:
    from ._process_group_mpi import ProcessGroupMPI

    MPI = _mpi.load()
    comm = MPI.COMM_WORLD.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    size, me = comm.Get_size(), comm.Get_rank()
    if size == 1 and world_size > 1:
        comm.Free()
        raise RuntimeError(
            f"init_process_group('mpi'): WORLD_SIZE is {world_size} but MPI started this process alone: start the "
            "job with `flambeau run --nproc-per-node N script.py` or `mpiexec -n N python script.py` (the mpi "
            "backend forms its group from the processes that mpiexec started together)")
    if world_size not in (-1, size):
        comm.Free()
        raise ValueError(f"init_process_group('mpi'): world_size is {world_size} but mpiexec started {size} processes")
    if rank not in (-1, me):
        comm.Free()
        raise ValueError(f"init_process_group('mpi'): rank is {rank} but MPI gave this process rank {me}")
    checks = os.environ.get("FLAMBEAU_DISTRIBUTED_CHECKS", "1") != "0"
    return ProcessGroupMPI(comm, range(size), timeout, check_sizes=checks)


def _store_for(scheme: str, fields: dict[str, Any], world_size: int, rank: int, timeout: timedelta) -> Store:
    if scheme == "file":
        return FileStore(fields["path"], world_size, timeout)
    if scheme == "tcp":
        host, port = fields["host"], fields["port"]
    else:
        host, port = os.environ.get("MASTER_ADDR"), _env_int("MASTER_PORT")
        if host is None or port is None:
            raise ValueError("init_process_group: env:// needs the environment variables MASTER_ADDR and MASTER_PORT "
                             "(flambeau run sets them)")
    return TCPStore(host, port, world_size, is_master=rank == 0, timeout=timeout)


def _resolve(group: ProcessGroup | None, what: str = "") -> ProcessGroup | None:
    """The group a call works on; None when this rank is not a member."""
    if _STATE.world is None:
        raise ValueError(NOT_INITIALIZED)
    if group is None:
        return _STATE.world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{what or 'group'}: group must be a ProcessGroup from new_group, got {type(group).__name__}")
    if group not in _STATE.groups:
        raise ValueError(f"{what or 'group'}: the process group was destroyed or belongs to another job")
    return group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank: in the default group, or the rank within ``group`` (-1 if not a member)."""
    pg = _resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in the default group or ``group`` (-1 if this rank is not a member)."""
    pg = _resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend of the default group or ``group``."""
    pg = _resolve(group, "get_backend")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.name()


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _resolve(group, "get_process_group_ranks")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg._ranks)


def get_global_rank(group: ProcessGroup | None, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of the group (size {len(ranks)})")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup | None, global_rank: int) -> int:
    """The rank within ``group`` of the process with global rank ``global_rank``."""
    pg = _resolve(group, "get_group_rank")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.group_rank(global_rank, "get_group_rank", "global_rank")


def get_default_store() -> Store | None:
    return _STATE.store


def new_group(ranks: Sequence[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options: Any = None, use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> ProcessGroup | Any:
    """A group of some of the ranks (all by default). Every rank of the default group must call it, in the
    same order; the ranks left out get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _resolve(None)
    size = world.size()
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks {list(ranks or [])} has duplicates")
    bad = [r for r in members if not 0 <= r < size]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are out of range for a world of size {size}")
    if backend is not None and Backend(backend) != world.name() and world.name() != "cpu:mpi,cuda:nccl":
        raise ValueError(f"new_group: backend '{backend}' differs from the default group's '{world.name()}'")
    pg_timeout = timeout or world._timeout
    cpu = cuda = None
    if world._cpu is not None:
        from ._process_group_mpi import ProcessGroupMPI

        parent = world._cpu
        comm = parent.comm.Create(parent.comm.Get_group().Incl(members))  # collective over the world
        if comm != _mpi._MPI.COMM_NULL:
            comm.Set_errhandler(_mpi._MPI.ERRORS_RETURN)
            cpu = ProcessGroupMPI(comm, members, pg_timeout, parent.check_sizes)
    if world._cuda is not None:
        cuda = world._cuda.subgroup(members, pg_timeout)
    if cpu is None and cuda is None:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(world.name(), members, cpu=cpu, cuda=cuda, timeout=pg_timeout, name=str(len(_STATE.groups)))
    _STATE.groups.append(pg)
    return pg


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group``, or every group (the default one included) when ``group`` is None."""
    if _STATE.world is None:
        raise ValueError(NOT_INITIALIZED)
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    doomed = list(_STATE.groups) if group is None or group is _STATE.world else [_resolve(group)]
    for pg in doomed:
        if pg._cpu is not None and not _mpi._BROKEN:
            pg._cpu.comm.Free()
        if pg._cuda is not None:
            pg._cuda.destroy()
        _STATE.groups.remove(pg)
    if group is None or group is _STATE.world:
        _STATE.world = None
        GroupMember.WORLD = None
        _STATE.groups = []
        _STATE.store = None

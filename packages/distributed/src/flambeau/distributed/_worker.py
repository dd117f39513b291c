"""What each process of ``flambeau run`` starts under ``mpiexec``: set the env:// variables from the rank
MPI gave this process, then run the user's script (or module) as ``__main__``.

Usage (the launcher builds it): ``mpiexec -n N python -m flambeau.distributed._worker [-m] target args...``
"""
from __future__ import annotations

import os
import runpy
import sys

# Rank variables set by the MPI process managers we know (MPICH's Hydra, Open MPI, Slurm), so that the
# rank is known without initialising MPI here (the script initialises it through init_process_group).
_RANK = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
_LOCAL_RANK = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_LOCAL_SIZE = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def _first(names: tuple[str, ...]) -> str | None:
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


def set_env_from_mpi() -> None:
    rank, size = _first(_RANK), _first(_SIZE)
    if rank is None or size is None:  # an unknown process manager: ask MPI itself
        from . import _mpi

        comm = _mpi.load().COMM_WORLD
        rank, size = str(comm.Get_rank()), str(comm.Get_size())
    os.environ["RANK"] = rank
    os.environ["WORLD_SIZE"] = size
    os.environ["LOCAL_RANK"] = _first(_LOCAL_RANK) or rank
    os.environ["LOCAL_WORLD_SIZE"] = _first(_LOCAL_SIZE) or size
    os.environ.setdefault("GROUP_RANK", "0")


def _run(argv: list[str]) -> None:
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


def _abort(code: int) -> None:
    """End the whole job with ``code``. MPI's process managers do not stop the other ranks when one exits
    with an error (they would wait for it in their next collective until their timeout), so the failure
    is written where the launcher watches (it then ends the job), and MPI_Abort ends it at once when
    this process already runs MPI (initialising MPI only to abort could wait for ranks that never will)."""
    sys.stdout.flush()
    sys.stderr.flush()
    status_dir = os.environ.get("FLAMBEAU_RUN_STATUS_DIR")
    if status_dir:
        path = os.path.join(status_dir, f"rank{os.environ.get('RANK', '0')}")
        with open(path + ".tmp", "w") as f:
            f.write(str(code))
        os.replace(path + ".tmp", path)
    from . import _mpi

    MPI = _mpi._MPI
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m flambeau.distributed._worker [-m] target [args...]")
    set_env_from_mpi()
    try:
        _run(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            if not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
            _abort(code)
        raise
    except BaseException:
        import traceback

        traceback.print_exc()
        _abort(1)


if __name__ == "__main__":
    main(sys.argv[1:])

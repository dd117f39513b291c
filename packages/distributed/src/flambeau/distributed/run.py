"""``python -m flambeau.distributed.run`` (and ``flambeau run``): start N copies of a training script on
this machine, with the env:// variables set, as ``torchrun`` does.

With the mpi backend's library installed (mpi4py, and so an ``mpiexec``), the copies are started by
``mpiexec -n N``: MPI then knows them as one job, and ``init_process_group()`` forms the group from
MPI itself. Each copy first runs ``flambeau.distributed._worker``, which sets RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE from the rank MPI gave it. Without mpi4py (``--launcher local``), the
launcher starts the copies itself with those variables (enough for NCCL, which rendezvous through a
TCPStore at MASTER_ADDR:MASTER_PORT).

Either way: the exit status is the first failure's (0 when every copy succeeded); when one copy
fails the others are terminated; nothing is ever restarted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Sequence

# How long terminated copies get to exit before they are killed.
_GRACE_SECONDS = 5.0


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host if host not in ("localhost",) else "127.0.0.1", 0))
        return s.getsockname()[1]


def find_mpiexec() -> str | None:
    """The ``mpiexec`` of the MPI that mpi4py uses: next to this Python first (the mpich wheel installs it
    there), then on PATH; None when mpi4py or mpiexec is missing."""
    from . import _mpi

    if not _mpi.is_available():
        return None
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="flambeau run",
        description="Start --nproc-per-node copies of a training script on this machine for flambeau.distributed "
                    "(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set in each). For several machines use "
                    "`mpiexec -n N -hosts host1,host2 python script.py` directly.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=_positive, default=1, dest="nproc_per_node",
                   help="how many copies to start (default 1)")
    p.add_argument("--nnodes", type=str, default="1",
                   help="only 1: for several machines start the job with mpiexec -hosts")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr",
                   help="the address of rank 0 (default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", type=int, default=0, dest="master_port",
                   help="the port of rank 0's store (default: a free one)")
    p.add_argument("--launcher", choices=("auto", "mpiexec", "local"), default="auto",
                   help="auto (default): through mpiexec when mpi4py is installed, else local processes")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m target)")
    p.add_argument("--no-python", "--no_python", action="store_true", dest="no_python",
                   help="run the target as a program, not a Python script")
    p.add_argument("target", help="the training script (or module, with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _command(opts: argparse.Namespace, through_worker: bool) -> list[str]:
    if opts.no_python:
        return [opts.target, *opts.args]
    target = ["-m", opts.target] if opts.module else [opts.target]
    if through_worker:
        return [sys.executable, "-m", "flambeau.distributed._worker", *target, *opts.args]
    return [sys.executable, *target, *opts.args]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher with ``argv`` (default ``sys.argv[1:]``); return the job's exit status."""
    opts = build_parser().parse_args(argv)
    if opts.nnodes not in ("1", "1:1"):
        print("flambeau run: several machines are started with mpiexec: mpiexec -n N -hosts host1,host2 "
              "python script.py (see flambeau-distributed's README)", file=sys.stderr)
        return 2
    n = opts.nproc_per_node
    env = dict(os.environ)
    env["MASTER_ADDR"] = opts.master_addr
    env["MASTER_PORT"] = str(opts.master_port or _free_port(opts.master_addr))
    env["WORLD_SIZE"] = str(n)
    env["LOCAL_WORLD_SIZE"] = str(n)
    env["GROUP_RANK"] = "0"
    env["FLAMBEAU_RUN"] = "1"
    mpiexec = find_mpiexec() if opts.launcher != "local" else None
    if opts.launcher == "mpiexec" and mpiexec is None:
        print("flambeau run: --launcher mpiexec needs mpi4py and an MPI: pip install mpi4py mpich", file=sys.stderr)
        return 2
    if mpiexec is not None and not opts.no_python:
        return _run_mpiexec(mpiexec, n, _command(opts, True), env)
    return _run_local(n, _command(opts, False), env)


def _run_mpiexec(mpiexec: str, n: int, command: list[str], env: dict[str, str]) -> int:
    # mpiexec ends the job when a process dies of a signal, not when one exits with an error: each
    # worker writes its failing status into status_dir, where _supervise sees it and ends the job.
    with tempfile.TemporaryDirectory(prefix="flambeau-run-") as status_dir:
        env = dict(env, FLAMBEAU_RUN_STATUS_DIR=status_dir)
        proc = subprocess.Popen([mpiexec, "-n", str(n), *command], env=env, start_new_session=True)
        return _supervise([proc], status_dir)


def _run_local(n: int, command: list[str], env: dict[str, str]) -> int:
    procs = []
    for rank in range(n):
        child = dict(env, RANK=str(rank), LOCAL_RANK=str(rank))
        procs.append(subprocess.Popen(command, env=child, start_new_session=True))
    return _supervise(procs)


def _first_reported(status_dir: str | None) -> int:
    """The status of the first worker that reported a failure in ``status_dir`` (0: none did)."""
    if status_dir is None:
        return 0
    reports = sorted((e.stat().st_mtime, e.path) for e in os.scandir(status_dir) if e.name.startswith("rank")
                     and not e.name.endswith(".tmp"))
    for _, path in reports:
        with open(path) as f:
            return int(f.read() or 1)
    return 0


def _supervise(procs: list[subprocess.Popen], status_dir: str | None = None) -> int:
    """Wait for every process; on the first failure (or a signal to the launcher) end the others."""
    stop = {"signal": 0}

    def forward(signum: int, frame: object) -> None:
        stop["signal"] = signum

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        failure = 0
        while True:
            if stop["signal"]:
                _terminate(procs)
                return 128 + stop["signal"]
            reported = _first_reported(status_dir)
            if reported and failure == 0:
                failure = reported
                print(f"flambeau run: a process failed with status {reported}: ending the job", file=sys.stderr)
                _terminate(procs)
                return failure
            running = False
            for p in procs:
                code = p.poll()
                if code is None:
                    running = True
                elif code != 0 and failure == 0:
                    failure = code if code > 0 else 128 - code
                    others = [q for q in procs if q is not p]
                    if any(q.poll() is None for q in others):
                        print(f"flambeau run: a process exited with status {code}: terminating the others",
                              file=sys.stderr)
                    _terminate(others)
            if not running:
                return _first_reported(status_dir) or failure
            time.sleep(0.05)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _terminate(procs: list[subprocess.Popen]) -> None:
    alive = [p for p in procs if p.poll() is None]
    for p in alive:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + _GRACE_SECONDS
    for p in alive:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


if __name__ == "__main__":
    sys.exit(main())

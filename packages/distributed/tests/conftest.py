"""Helpers for running real multi-process jobs, each bounded by a hard timeout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

JOBS = Path(__file__).resolve().parent / "jobs"
# Generous: the CI machine may be loaded (several jobs share two cores); a job that hangs fails here.
JOB_TIMEOUT = float(os.environ.get("FLAMBEAU_DISTRIBUTED_JOB_TIMEOUT", "420"))


def mpiexec() -> str:
    from flambeau.distributed.run import find_mpiexec

    path = find_mpiexec()
    if path is None:
        pytest.skip("mpi4py or mpiexec is not installed (pip install mpi4py mpich)")
    return path


def run(cmd: list[str], timeout: float = JOB_TIMEOUT, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a job; fail (never hang) when it outlives ``timeout``."""
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        if env is None or name not in env:
            full_env.pop(name, None)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=JOBS,
                              start_new_session=True)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(cmd)} did not finish within {timeout} s:\n{e.stdout}\n{e.stderr}")


def launch(n: int, script: str, *args: str, launcher: str = "auto", **kw) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "flambeau.distributed.run", "--nproc-per-node", str(n),
                "--launcher", launcher, script, *args], **kw)


def under_mpiexec(n: int, script: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return run([mpiexec(), "-n", str(n), sys.executable, script, *args], **kw)

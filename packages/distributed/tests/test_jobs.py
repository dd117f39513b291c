"""Real 2- and 4-process jobs on loopback, under mpiexec and under the launcher (tests/jobs/ holds what
each rank runs; every job has a hard timeout)."""
from __future__ import annotations

import re
import sys

import pytest

from conftest import JOBS, launch, mpiexec, run, under_mpiexec


def _passed(result, n: int, what: str) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for rank in range(n):
        assert f"rank {rank}: " in result.stdout and what in result.stdout, out


def test_collectives_every_dtype_2_processes_under_mpiexec():
    _passed(under_mpiexec(2, "collectives.py"), 2, "checks passed")


def test_collectives_every_dtype_4_processes_under_the_launcher():
    mpiexec()
    _passed(launch(4, "collectives.py"), 4, "checks passed")


def test_ddp_equals_single_process_training_2_processes_under_the_launcher():
    mpiexec()
    _passed(launch(2, "ddp.py"), 2, "ddp checks passed")


def test_ddp_equals_single_process_training_4_processes_under_mpiexec():
    _passed(under_mpiexec(4, "ddp.py"), 4, "ddp checks passed")


def test_a_killed_rank_ends_the_job():
    result = under_mpiexec(3, "killed.py", "kill", timeout=120)
    assert result.returncode != 0
    assert "signal 9" in result.stdout + result.stderr, result.stdout + result.stderr


def test_a_stalled_rank_makes_the_others_fail_with_a_clear_error_within_the_timeout():
    mpiexec()
    result = launch(3, "killed.py", "stop", timeout=180, env={"JOB_TIMEOUT": "4"})
    out = result.stdout + result.stderr
    assert result.returncode == 3, out  # the first failure's status
    # whichever survivor times out first reports and ends the job
    assert re.search(r"rank [02]: clear error after", out) and "timed out after 4 s" in out, out
    assert "no error" not in out


def test_launcher_exit_status_is_the_first_failure_and_the_others_are_terminated():
    for launcher in ("local", "auto"):
        if launcher == "auto":
            mpiexec()
        result = launch(2, "exit_status.py", launcher=launcher, timeout=120)
        assert result.returncode == 5, (launcher, result.stdout, result.stderr)
        assert "rank 0 finished" not in result.stdout, (launcher, result.stdout)


def test_launcher_sets_the_env_variables_and_runs_modules():
    result = launch(2, "env_report.py", "--flag", "x", launcher="local", timeout=120)
    assert result.returncode == 0, result.stderr
    lines = sorted(line for line in result.stdout.splitlines() if line.startswith("env "))
    assert lines[0].startswith("env 0 0 2 127.0.0.1 ") and lines[1].startswith("env 1 1 2 127.0.0.1 "), lines
    assert all(line.endswith("['--flag', 'x']") for line in lines), lines
    mpiexec()
    result = launch(2, "env_report.py", timeout=120)
    assert result.returncode == 0, result.stderr
    lines = sorted(line for line in result.stdout.splitlines() if line.startswith("env "))
    assert [line.split()[1:4] for line in lines] == [["0", "0", "2"], ["1", "1", "2"]], lines


def test_flambeau_run_forwards_to_the_launcher():
    pytest.importorskip("flambeau.cli")
    result = run([sys.executable, "-m", "flambeau.cli", "run", "--nproc-per-node", "2", "--launcher", "local",
                  str(JOBS / "env_report.py")], timeout=120)
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("env ") for line in result.stdout.splitlines()) == 2


def test_mpi_backend_in_a_process_that_mpiexec_did_not_start():
    mpiexec()
    result = run([sys.executable, "-c", "import flambeau.distributed as d; d.init_process_group('mpi')"],
                 env={"WORLD_SIZE": "2", "RANK": "0"}, timeout=120)
    assert result.returncode != 0
    assert "MPI started this process alone" in result.stderr and "flambeau run" in result.stderr, result.stderr


def test_a_world_of_one_process():
    mpiexec()
    code = ("import flambeau as fb, flambeau.distributed as d\n"
            "d.init_process_group()\n"
            "t = fb.arange(4.0); d.all_reduce(t, op=d.ReduceOp.AVG); assert t.tolist() == [0, 1, 2, 3]\n"
            "o = [None]; d.all_gather_object(o, 'x'); assert o == ['x']\n"
            "assert d.get_world_size() == 1 and d.get_rank() == 0 and d.get_backend() == 'mpi'\n"
            "print('ok')\n")
    result = run([sys.executable, "-c", code], timeout=120)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def _accuracy(stdout: str) -> float:
    lines = [line for line in stdout.splitlines() if line.startswith("test accuracy: ")]
    assert lines, stdout
    return float(lines[-1].split()[-1].rstrip("%"))


def test_flambeau_train_data_parallel_reaches_the_single_process_accuracy(tmp_path):
    pytest.importorskip("flambeau.cli")
    mpiexec()
    common = ["--epochs", "3", "--no-progress", "--no-plot"]
    one = run([sys.executable, "-m", "flambeau.cli", "train", *common, "--out", str(tmp_path / "one")])
    two = run([sys.executable, "-m", "flambeau.cli", "train", "--nproc-per-node", "2", *common,
               "--out", str(tmp_path / "two")])
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stdout + two.stderr
    assert "data-parallel: 2 processes, 16 images per process and step" in two.stdout, two.stdout
    assert two.stdout.count("epoch 3/3") == 1, two.stdout  # one process reports
    assert abs(_accuracy(one.stdout) - _accuracy(two.stdout)) <= 3.0, (one.stdout, two.stdout)
    assert (tmp_path / "two" / "checkpoint.safetensors").is_file()

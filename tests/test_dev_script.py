"""The bootstrap script's command line (the parts that need no virtualenv)."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dev(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "dev"), *args],
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env},
    )


def test_help_lists_the_commands():
    result = dev("help")
    assert result.returncode == 0
    for command in ("./dev train", "./dev demo", "./dev test", "./dev install", "./dev info", "./dev packages"):
        assert command in result.stdout


def test_unknown_command_fails():
    result = dev("frobnicate")
    assert result.returncode == 1
    assert "unknown command 'frobnicate'" in result.stderr


def test_install_mode_is_checked():
    result = dev("packages", FLAMBEAU_INSTALL="sideways")
    assert result.returncode == 1
    assert "FLAMBEAU_INSTALL must be 'editable' or 'plain'" in result.stderr


def test_cuda_backend_is_left_out_on_request():
    listed = dev("packages", FLAMBEAU_CUDA="0")
    assert listed.returncode == 0
    assert "backends/cuda" not in listed.stdout.split()
    assert "backends/cpu" in listed.stdout.split()


def test_help_shows_every_setting():
    result = dev("help")
    settings = ("FLAMBEAU_VENV", "FLAMBEAU_INSTALL", "FLAMBEAU_CUDA", "FLAMBEAU_WHEELS", "FLAMBEAU_RESULTS", "PYTHON")
    for setting in settings:
        assert setting in result.stdout
    assert "set -euo" not in result.stdout


def test_main_job_set_up_installs_no_test_tools_nor_mkl():
    # `./dev train` installs the packages without their `testing` extras and without pytest/hypothesis.
    text = (ROOT / "dev").read_text()
    assert 'train) setup main; exec "$VENV/bin/flambeau" train "$@"' in text
    assert '[[ "$profile" == full ]] && grep -Eq' in text  # extras only for the full set-up
    assert '[[ "$profile" == full ]] && deps=("${TEST_DEPS[@]}")' in text

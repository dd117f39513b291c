"""Kernels taking integer values or sizes survive extreme integers (issue 11): see ``_int_fuzz.py``."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("flambeau_cpu._C")


def test_extreme_integers_return_the_answer_or_raise_never_crash():
    script = os.path.join(os.path.dirname(__file__), "_int_fuzz.py")
    run = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    last = run.stdout.strip().splitlines()[-1:] or [""]
    assert run.returncode == 0, (f"exit status {run.returncode}; last call: {last[0]}\n"
                                 f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")

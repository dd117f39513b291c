"""No index kernel checks an index in one pass and trusts it in another (issue 11).

Each op runs in a subprocess (``_index_race.py``) while another thread flips the last entry of its
index between 0 and 2**40: a kernel that checked first and read the index again later would use
2**40 and crash. The subprocess must exit cleanly: every call returned or raised the op's error.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("flambeau_cpu._C")

SCRIPT = os.path.join(os.path.dirname(__file__), "_index_race.py")
OPS = ["gather", "gather_dim1", "gather_out", "scatter", "scatter_", "scatter_add", "scatter_add_",
       "scatter_add_dim1", "scatter_reduce", "index_select", "index_select_1d", "index_add", "index_add_",
       "index_copy", "index_copy_", "index_fill", "index_reduce", "take", "take_along_dim", "index", "index_2d",
       "index_put", "index_put_", "setitem", "bincount"]
SECONDS = float(os.environ.get("FLAMBEAU_RACE_SECONDS", "0.6"))  # per op
GROUP = 6  # ops per subprocess: one interpreter start for several ops


@pytest.mark.parametrize("ops", [OPS[k:k + GROUP] for k in range(0, len(OPS), GROUP)], ids=lambda ops: ops[0])
def test_index_changed_by_another_thread_never_crashes(ops):
    run = subprocess.run([sys.executable, SCRIPT, str(SECONDS), *ops], capture_output=True, text=True,
                         timeout=120 + 20 * SECONDS * len(ops))
    assert run.returncode == 0, f"exit status {run.returncode}\n{run.stdout[-1500:]}{run.stderr[-3000:]}"

"""scipy.linalg's OpenBLAS, loaded at the first linalg call that needs scipy, runs its parallel
LAPACK jobs (getrf behind lu_factor and solve) on the kernels' OpenMP team like numpy's, rather than
on a pthreads pool of its own (issue 11: one thread pool)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import os, sys
    import flambeau as fb
    from flambeau_cpu import _threads
    assert "scipy.linalg" not in sys.modules, "scipy.linalg loaded at import flambeau"
    fb.linalg.{call}
    assert "scipy.linalg" in sys.modules
    from threadpoolctl import threadpool_info
    openblas = {{os.path.realpath(i["filepath"]) for i in threadpool_info() if i["internal_api"] == "openblas"}}
    shared = {{os.path.realpath(p) for p in _threads.shared}}
    assert len(openblas) >= 2, openblas  # numpy's and scipy's
    assert openblas <= shared, (openblas, shared)
    print("ok")
""")


@pytest.mark.parametrize("call", ["lu_factor(fb.randn(5, 5, dtype=fb.float64))",
                                  "solve(fb.randn(4, 4, dtype=fb.float64), fb.randn(4, 2, dtype=fb.float64))"])
def test_scipy_openblas_joins_the_one_pool_at_the_first_linalg_call(call):
    out = subprocess.run([sys.executable, "-c", _CHILD.format(call=call)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")

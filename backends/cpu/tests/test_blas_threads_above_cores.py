"""More threads than cores, through the OpenBLAS thread callback (flambeau_cpu._threads).

OpenBLAS 0.3.28 (bundled by numpy 2.2.5 and scipy 1.16.0/1.16.1) runs a call's jobs through the callback
with per-job buffers it allocated only for the thread count it started with: after
``fb.set_num_threads(cores + 1)`` the first threaded product segfaulted in ``sgemm_itcopy`` (found by CI's
min-versions environment; the floors are now numpy 2.2.6 and scipy 1.16.2, which bundle 0.3.29). Run in
a subprocess, so that a crash fails this test instead of ending the session.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CODE = textwrap.dedent("""
    import os
    import numpy as np
    import scipy.linalg.blas as blas
    import flambeau as fb

    threads = (os.cpu_count() or 1) + 1
    fb.set_num_threads(threads)  # after scipy's OpenBLAS is loaded: both get the callback and the count
    a = fb.randn(384, 384)
    want = a.numpy().astype(np.float64) @ a.numpy().astype(np.float64)
    for _ in range(3):
        got = (a @ a).numpy()  # numpy's OpenBLAS
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    x = np.asarray(a.numpy(), order="F")
    for _ in range(3):
        got = blas.sgemm(1.0, x, x)  # scipy's OpenBLAS, whose jobs now run on the kernels' team
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    print("ok", threads)
""")


def test_more_threads_than_cores_through_the_blas_callback():
    pytest.importorskip("scipy")
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout}\n{out.stderr[-3000:]}"
    assert out.stdout.split()[0] == "ok"

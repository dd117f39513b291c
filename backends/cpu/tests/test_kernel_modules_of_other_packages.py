"""The CPU backend imports the kernels of another distribution's ops (flambeau-nn's, -optim's,
-distributions') only when that distribution declared them: they are a third of the backend's load."""
from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

CODE = ("import sys; import flambeau as fb; print((fb.ones(2) + 1).tolist()); "
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('flambeau_cpu.kernels.') "
        "and m.rsplit('.', 1)[1] in ('optim', 'dist_samplers', 'nn_conv', 'nn_rnn', 'nn_activation')))")


def _run(disabled: str) -> list[str]:
    env = dict(os.environ, FLAMBEAU_DISABLE_PLUGINS=disabled)
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, env=env)
    return out.stdout.strip().splitlines()[-2:]


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_without_nn_and_distributions_their_kernel_modules_stay_unimported():
    # optim's kernel module is imported exactly when flambeau-optim is installed (this test also runs
    # in the backend's own environment, which has no optim)
    optim = ["optim"] if _installed("flambeau-optim") else []
    assert _run("flambeau-nn,flambeau-distributions") == ["[2.0, 2.0]", str(optim)]


def test_with_every_package_the_table_has_their_kernels():
    import flambeau as fb
    from flambeau.ops._dispatch import TABLES
    from flambeau.ops._registry import OPS

    table = TABLES["cpu"]
    for name, provider in (("optim_sgd", "flambeau-optim"), ("nn_gelu", "flambeau-nn"),
                           ("dist_binomial", "flambeau-distributions")):
        if name in OPS and OPS[name].provider == provider:  # that distribution is installed here
            assert table.get(name) is not None, name
    assert fb.ones(1).add(1).tolist() == [2.0]

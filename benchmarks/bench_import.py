"""(e) ``import flambeau`` (core-tensor, the CPU backend, autograd, optim) vs ``import numpy``, in four conditions.

Each sample is a fresh interpreter that times only its import statement (interpreter start-up
excluded); flambeau and numpy alternate within each condition, and the order of the conditions
(and of the two modules) turns every round. ``import flambeau`` includes
numpy's own import and the plugin and backend load. Two clocks: wall time, and the process's
CPU time, which a busy neighbour on a shared machine disturbs less.

flambeau is imported from a plain install made for the benchmark (the four packages' files and
``.dist-info`` folders copied from this repository and the current environment, then compiled
to bytecode as pip does at install), run with ``python -S`` and that folder first on the path,
so that the editable install's finders play no part. The rest of the path is the current
environment's site-packages without flambeau's own distributions (a folder of links to the other
entries): the plugins found are those of the plain install, not the editable ones beside it.
``FLAMBEAU_BENCH_IMPORT=full`` measures every flambeau distribution instead (nn, distributions,
distributed, the meta and example backends and the ``flambeau`` meta-package as well), as a
``pip install flambeau`` has them; its rows say ``full install``.

- ``normal``: bytecode written and read as usual (the install imported once before).
- ``PYTHONDONTWRITEBYTECODE=1``: as tox, ``.ci/run`` and many container images set it; a copy of
  the fresh install, never imported without the variable.
- ``read-only install``: a fresh copy made read-only, imported by a process without the
  ``CAP_DAC_OVERRIDE`` capability (``setpriv``), so that even root cannot write into it.
- ``fresh install``: a new copy of the fresh install for every sample: its first import.

numpy's own install is the same in every condition; it is timed in each condition's environment.
"""
from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile

from _harness import Row

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNIPPET = ("import time; w = time.perf_counter(); c = time.process_time(); import {m}; "
           "print(time.perf_counter() - w, time.process_time() - c)")
#: (distribution, what to copy: repository path -> install path)
PACKAGES = (
    ("flambeau-core-tensor", {"core-tensor/src/flambeau": "flambeau",
                              "core-tensor/src/_flambeau_testing_plugin.py": "_flambeau_testing_plugin.py"}),
    ("flambeau-core-autograd", {"core-autograd/src/flambeau/autograd": "flambeau/autograd"}),
    ("flambeau-optim", {"optim/src/flambeau/optim": "flambeau/optim"}),
    ("flambeau-backend-cpu", {"backends/cpu/src/flambeau_cpu": "flambeau_cpu"}),
)
#: the other distributions of a full install (``FLAMBEAU_BENCH_IMPORT=full``)
FULL = (
    ("flambeau-nn", {"nn/src/flambeau/nn": "flambeau/nn"}),
    ("flambeau-distributions", {"distributions/src/flambeau/distributions": "flambeau/distributions"}),
    ("flambeau-distributed", {"packages/distributed/src/flambeau/distributed": "flambeau/distributed"}),
    ("flambeau-backend-meta", {"backends/meta/src/flambeau_meta": "flambeau_meta"}),
    ("flambeau-backend-example", {"backends/example/src/flambeau_example": "flambeau_example"}),
    ("flambeau", {"packages/flambeau/src/flambeau": "flambeau"}),
)
CONDITIONS = ("normal", "PYTHONDONTWRITEBYTECODE=1", "read-only install", "fresh install")
#: setpriv drops the capability that lets root write anywhere, so that file permissions apply to it too
NO_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
               "--inh-caps", "-dac_override,-dac_read_search"]


def _full() -> bool:
    return os.environ.get("FLAMBEAU_BENCH_IMPORT", "") == "full"


def _plain_install(dest: str, full: bool = False) -> None:
    """The four distributions (every one with ``full``) as a plain pip install would leave them in ``dest``."""
    from importlib import metadata

    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for dist_name, files in PACKAGES + (FULL if full else ()):
        for src, dst in files.items():
            src, dst = os.path.join(ROOT, src), os.path.join(dest, dst)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
        dist = metadata.distribution(dist_name)
        info = os.path.join(dest, f"{dist_name.replace('-', '_')}-{dist.version}.dist-info")
        os.makedirs(info)
        for name in ("METADATA", "entry_points.txt", "top_level.txt"):
            text = dist.read_text(name)
            if text is not None:
                with open(os.path.join(info, name), "w", encoding="utf-8") as f:
                    f.write(text)
    compileall.compile_dir(dest, quiet=2)  # as pip does at install


def _site(dest: str) -> str:
    """A folder of links to this environment's site-packages entries, flambeau's own distributions
    (their files, ``.dist-info``, editable finders and ``.pth`` files) left out."""
    purelib = sysconfig.get_paths()["purelib"]
    os.makedirs(dest)
    for name in os.listdir(purelib):
        if name.startswith(("flambeau", "_flambeau", "__editable__")) or name.endswith(".pth"):
            continue
        os.symlink(os.path.join(purelib, name), os.path.join(dest, name))
    return dest


def _env(condition: str, install: str, site: str) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if condition == "PYTHONDONTWRITEBYTECODE=1":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([install, site])
    return env


def _sample(module: str, condition: str, install: str, site: str) -> tuple[float, float]:
    cmd = [sys.executable, "-S", "-c", SNIPPET.format(m=module)]
    if condition == "read-only install":
        cmd = NO_OVERRIDE + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=_env(condition, install, site))
    if "Warning" in out.stderr:  # a plugin that failed to load would make the figure meaningless
        raise RuntimeError(f"import {module} warned in the benchmark's install:\n{out.stderr}")
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall) * 1e3, float(cpu) * 1e3


def _copy(pristine: str, dest: str, read_only: bool = False) -> str:
    shutil.copytree(pristine, dest, symlinks=True)
    if read_only:
        for folder, dirs, files in os.walk(dest):
            for name in dirs + files:
                path = os.path.join(folder, name)
                os.chmod(path, os.stat(path).st_mode & ~0o222)
        os.chmod(dest, os.stat(dest).st_mode & ~0o222)
    return dest


def run(libs: list, quick: bool = False) -> list[Row]:
    rounds = 5 if quick else 15
    full = _full()
    work = tempfile.mkdtemp(prefix="flambeau-bench-import-")
    try:
        pristine = os.path.join(work, "pristine")
        _plain_install(pristine, full)
        site = _site(os.path.join(work, "site"))
        installs = {
            "normal": _copy(pristine, os.path.join(work, "normal")),
            "PYTHONDONTWRITEBYTECODE=1": _copy(pristine, os.path.join(work, "nowrite")),
            "read-only install": _copy(pristine, os.path.join(work, "readonly"), read_only=True),
        }
        conditions = [c for c in CONDITIONS if c != "read-only install" or shutil.which("setpriv")]
        _sample("flambeau", "normal", installs["normal"], site)  # imported once before: bytecode written
        _sample("numpy", "normal", installs["normal"], site)  # warms the OS file cache
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for i in range(rounds):
            # The order turns every round (conditions, and which module goes first), so that no
            # condition always runs right after another's work: the fresh install's copy (~10 MB
            # written) is followed by each condition in turn, not always by `normal` of the next round.
            for condition in conditions[i % len(conditions):] + conditions[:i % len(conditions)]:
                install = installs.get(condition) or _copy(pristine, os.path.join(work, f"fresh{i}"))
                for module in (("flambeau", "numpy") if i % 2 == 0 else ("numpy", "flambeau")):
                    samples.setdefault((condition, module), []).append(_sample(module, condition, install, site))
    finally:
        for folder, dirs, _ in os.walk(work):  # the read-only copy must be made writable to be removed
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for clock, index in (("wall", 0), ("cpu", 1)):
        for (condition, module), values in samples.items():
            v = [s[index] for s in values]
            label = f"import{' (full install)' if full else ''}, {clock} time, {condition}"
            rows.append(Row(label, module, statistics.median(v), "ms", False,
                            (min(v), max(v))))
    return rows


if __name__ == "__main__":
    from run import main

    main(["import"])

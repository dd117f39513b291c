"""(e) ``import flambeau`` (core-tensor + the CPU backend) vs ``import torch`` and ``import numpy``.

Each sample is a fresh interpreter that times only its import statement (interpreter start-up
excluded); the libraries alternate (flambeau, torch, numpy, flambeau, ...). ``import flambeau``
includes numpy's own import and the plugin and backend load. Two clocks are reported: wall
time, and the process's CPU time, which a busy neighbour on a shared machine disturbs less.

Bytecode caching is left on, as for any installed package: ``PYTHONDONTWRITEBYTECODE`` is
removed from the children's environment, so that ``.pyc`` files and flambeau's cache of its
generated op functions (``flambeau/ops/_codecache.py``) are written once and then used.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

from _harness import Row

SNIPPET = ("{pre}import time; w = time.perf_counter(); c = time.process_time(); import {m}; "
           "print(time.perf_counter() - w, time.process_time() - c)")
#: A diagnostic row: flambeau with scipy (hence numpy) imported, untimed, first: what
#: `import flambeau` costs beyond scipy, which the CPU backend's kernel modules import at load.
SCIPY_PRELOADED = "flambeau, numpy+scipy preloaded"


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _importable(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def _sample(label: str) -> tuple[float, float]:
    module, pre = label, ""
    if label == SCIPY_PRELOADED:
        module, pre = "flambeau", "import scipy.special, scipy.linalg; "
    out = subprocess.run([sys.executable, "-c", SNIPPET.format(m=module, pre=pre)], capture_output=True,
                         text=True, check=True, env=_env())
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall) * 1e3, float(cpu) * 1e3


def run(libs: list, quick: bool = False) -> list[Row]:
    modules = [m for m in ("flambeau", "torch", "numpy") if m == "numpy" or _importable(m)]
    if "flambeau" in modules and _importable("scipy.special, scipy.linalg"):
        modules.insert(1, SCIPY_PRELOADED)
    for module in modules:  # warm the bytecode caches and the OS file cache
        _sample(module)
    samples: dict[str, list[tuple[float, float]]] = {m: [] for m in modules}
    for _ in range(5 if quick else 15):
        for module in modules:
            samples[module].append(_sample(module))
    rows = []
    for clock, index in (("wall", 0), ("cpu", 1)):
        for label, values in samples.items():
            v = [s[index] for s in values]
            rows.append(Row(f"import, {clock} time", label, statistics.median(v), "ms", False, (min(v), max(v))))
    return rows


if __name__ == "__main__":
    from run import main

    main(["import"])

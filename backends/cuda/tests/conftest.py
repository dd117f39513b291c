"""The test session's ``cudasim`` device: flambeau_cuda's backend over the numpy test double.

``sim/`` holds the double (``_fake_cupy``), its backend module and the dist-info that registers the
``cudasim`` device type; it goes on ``sys.path`` here, before anything imports flambeau (which reads
the backends' entry points at import). Nothing outside this test session sees it.
"""
from __future__ import annotations

import os
import sys

import pytest

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sim")
if SIM not in sys.path:
    sys.path.insert(0, SIM)


def _gpu_present() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no CuPy, no driver: no GPU
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _gpu_present():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with CuPy (none here): gpu_check.sh runs these on one")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a real NVIDIA GPU and CuPy (skipped elsewhere, with the reason)")


@pytest.fixture
def env_with_sim() -> dict[str, str]:
    """The environment for a subprocess that should see the ``cudasim`` device too."""
    env = dict(os.environ)
    env["PYTHONPATH"] = SIM + os.pathsep + env.get("PYTHONPATH", "")
    return env

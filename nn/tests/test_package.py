"""flambeau-nn installs as its own distribution and registers its op plugin."""
from __future__ import annotations

import flambeau as fb
import flambeau.nn
import flambeau.nn.functional  # noqa: F401
import flambeau.ops  # noqa: F401


def test_version_and_plugin_loaded():
    assert flambeau.nn.__version__ == "0.1.0"
    assert isinstance(fb.ops.declarations(), dict)
    assert fb.ones(2).sum().item() == 2

"""docs/tutorial.md: every ```python block runs, in order, in one namespace."""
from __future__ import annotations

import pathlib
import re

import pytest

TUTORIAL = pathlib.Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", TUTORIAL.read_text(), flags=re.S | re.M)


def test_tutorial_has_code():
    assert len(_blocks()) >= 6


def test_tutorial_runs(capsys):
    nn = pytest.importorskip("flambeau.nn")
    if not all(hasattr(nn, name) for name in ("Linear", "ReLU", "Sequential")):
        pytest.skip("flambeau.nn has no Linear/ReLU yet")
    namespace: dict = {"__name__": "tutorial"}
    for i, block in enumerate(_blocks()):
        code = compile(block, f"{TUTORIAL.name} block {i + 1}", "exec")
        exec(code, namespace)
    assert "test accuracy:" in capsys.readouterr().out

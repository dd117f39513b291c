"""With the autograd plugin disabled, core-tensor says to install flambeau-core-autograd."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import flambeau as fb
x = fb.tensor([1.0]) * 2
print(x.tolist())
for fn in (lambda: fb.tensor([1.0], requires_grad=True), lambda: x.requires_grad_(), lambda: x.backward()):
    try:
        fn()
    except RuntimeError as e:
        print("install flambeau-core-autograd" in str(e))
"""


def test_disabled_plugin_gives_install_hint():
    env = dict(os.environ, FLAMBEAU_DISABLE_PLUGINS="autograd")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[2.0]", "True", "True", "True"], out.stdout + out.stderr

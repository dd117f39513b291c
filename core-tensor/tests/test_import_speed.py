"""What keeps ``import flambeau`` fast: packaging is not imported for plain requirements, and
the quick requirement check agrees with packaging's wherever it answers."""
from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from flambeau.plugins import _discovery
from packaging.requirements import Requirement


def test_core_and_cpu_backend_load_without_packaging():
    # packaging made unimportable: the core and the CPU backend, whose requirement on the core is
    # a plain range, must still load (another plugin needing packaging would only warn).
    code = ("import sys; sys.modules['packaging'] = None; import flambeau as fb; "
            "print((fb.ones(2) + 1).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[2.0, 2.0]"


VERSIONS = ["0.1", "0.1.0", "0.1.5", "0.2", "0.2.0", "1.0", "0.0.9", "10.1"]
SPECS = ["", "<0.2", ">=0.1", "<0.2,>=0.1", " (<0.2, >=0.1)", "==0.1", "==0.1.0.0", "!=0.1", ">0.1", "<=0.1.5",
         ">=0.1,<0.2,!=0.1.5"]


@pytest.mark.parametrize("spec,version", list(itertools.product(SPECS, VERSIONS)))
def test_quick_check_agrees_with_packaging(spec, version):
    if _discovery._plainly_satisfied(spec, version):
        req = Requirement("flambeau-core-tensor" + spec)
        assert req.specifier.contains(version, prereleases=True)
    else:
        req = Requirement("flambeau-core-tensor" + spec)
        assert not req.specifier.contains(version, prereleases=True)


@pytest.mark.parametrize("spec", ["~=0.1", ">=0.1.dev0", "==0.1.*", "[extra]>=0.1", ">=0.1; python_version>'3'",
                                  " @ https://example.org/x.whl", ">=0.1+local"])
def test_quick_check_leaves_other_forms_to_packaging(spec):
    assert _discovery._plainly_satisfied(spec, "0.1.0") is False


def test_prerelease_installed_version_is_left_to_packaging():
    assert _discovery._plainly_satisfied(">=0.1", "0.2.0rc1") is False
    assert _discovery._plainly_satisfied("", "0.2.0rc1") is True  # no specifier: any version

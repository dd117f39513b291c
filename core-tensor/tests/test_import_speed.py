"""What keeps ``import flambeau`` fast: packaging is not imported for plain requirements, the
quick requirement check agrees with packaging's wherever it answers, and scipy and numpy.random
wait for the first kernel that needs them."""
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


def test_import_leaves_scipy_and_numpy_random_for_first_use():
    # scipy (~0.2 s) and numpy.random (~20 ms) are imported by the kernels that need them, at their
    # first call; a random op and a small addmm then work and bring them in.
    code = ("import sys; import flambeau as fb; "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'numpy.random')))); "
            "fb.manual_seed(0); g = fb.Generator(); g.get_state(); "
            "print(tuple(fb.randint(0, 5, (3,)).shape), "
            "fb.addmm(fb.ones(2, 2), fb.ones(2, 3), fb.ones(3, 2)).tolist(), "
            "'numpy.random' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, used = out.stdout.strip().splitlines()[-2:]
    assert loaded == "[]"
    assert used == "(3,) [[4.0, 4.0], [4.0, 4.0]] True"


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


def test_import_leaves_heavy_stdlib_modules_alone():
    # importlib.metadata (with email, zipfile, tempfile, socket: ~25 ms), importlib.abc/resources and json
    # were imported by `import flambeau` for a few entry points, a base class and a manifest.
    code = ("import sys; import flambeau; "
            "print(sorted(m for m in ('importlib.metadata', 'email', 'importlib.resources', 'importlib.abc', "
            "'json', 'tempfile', 'zipfile') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_import_leaves_ml_dtypes_and_optional_submodules_for_first_use():
    # ml_dtypes (~10 ms, bfloat16 only), optim's schedulers and weight averaging, LBFGS and
    # autograd.functional were imported by every `import flambeau` (the CPU backend's half-precision
    # wrapper; the optim and autograd plugins' packages); each loads at its first use.
    lazy = ("ml_dtypes", "flambeau.optim.lr_scheduler", "flambeau.optim.swa_utils", "flambeau.optim.lbfgs",
            "flambeau.autograd.functional")
    code = (f"import sys; import flambeau as fb; print(sorted(m for m in {lazy!r} if m in sys.modules)); "
            "x = fb.ones(3, dtype=fb.bfloat16); print('ml_dtypes' in sys.modules, x.sum().item())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, used = out.stdout.strip().splitlines()[-2:]
    assert loaded == "[]"
    assert used == "True 3.0"


def test_import_leaves_rarely_needed_modules_for_first_use():
    # Each of these was loaded by every `import flambeau` and is now loaded where it is used:
    # pkgutil (flambeau._portions.extend_path instead), signal's enums (_isolation uses _signal),
    # traceback (a failed plugin's traceback), the repr formatter (first repr or set_printoptions),
    # and the decompositions onto the core tier (first call of one; see test_decomp_deferred.py).
    # Those of other distributions are checked when installed (custom autograd Functions, the
    # engine's heapq, the CPU backend's four-step FFT, nn's formulas, the distributions package).
    code = ("import sys, flambeau as fb\n"
            "print(sorted(m for m in sys.modules if m in ('pkgutil', 'signal', 'traceback', 'heapq',\n"
            "    'flambeau._tensor_repr', 'flambeau.autograd.function', 'flambeau_cpu.kernels._fft_four_step')\n"
            "    or m.startswith(('flambeau._core_ops.decomp.', 'flambeau.nn._formulas.', 'flambeau.distributions.'))\n"
            "    and m.rpartition('.')[2] not in ('_index', '_ops', '_samplers', '_version')))\n"
            "fb.set_printoptions(precision=3); r = repr(fb.ones(2))\n"
            "print(r, 'flambeau._tensor_repr' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, used = out.stdout.strip().splitlines()[-2:]
    assert loaded == "[]"
    assert used == "tensor([1., 1.]) True"

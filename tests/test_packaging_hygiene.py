"""Packaging hygiene of every package folder, read from the source tree, and the CI helper scripts.

What the built sdists and wheels contain is checked by .ci/build_dists.py (a CI step); these tests check
the sources that decide it: licence files, py.typed markers, MANIFEST.in, metadata, one version source,
dependency ranges that the min-versions environment can test.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the checks are the same on every Python

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = sorted(str(p.parent.relative_to(ROOT)) for pattern in ("*/pyproject.toml", "backends/*/pyproject.toml",
                                                                 "packages/*/pyproject.toml")
                 for p in ROOT.glob(pattern))


def _project(folder: str) -> dict:
    with open(ROOT / folder / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _ci_module(name: str):
    spec = importlib.util.spec_from_file_location(f"ci_{name}", ROOT / ".ci" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _top_packages(folder: str) -> list[Path]:
    """The folders under src/ that the distribution owns: flambeau/optim for optim, flambeau_cpu..."""
    src = ROOT / folder / "src"
    inits = sorted(p.parent for p in src.rglob("__init__.py") if "egg-info" not in str(p))
    return [p for p in inits if not any(q in p.parents for q in inits)]


def test_repository_license_is_bsd_3_clause():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License\n\nCopyright (c) 2026, the flambeau developers\n")
    assert "Neither the name of the copyright holder" in text


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_package_ships_the_license(folder):
    assert (ROOT / folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    project = _project(folder)["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # the SPDX expression says it


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_python_package_is_typed(folder):
    tops = _top_packages(folder)
    assert tops, f"{folder} has no package under src/"
    for top in tops:
        assert (top / "py.typed").is_file(), f"{top.relative_to(ROOT)} has no py.typed"


@pytest.mark.parametrize("folder", FOLDERS)
def test_metadata_has_classifiers_and_urls(folder):
    project = _project(folder)["project"]
    classifiers = project["classifiers"]
    # The CPU backend needs scipy>=1.16 (batched linalg), hence Python 3.11; so does the meta-package.
    lowest = 11 if folder in ("backends/cpu", "packages/flambeau") else 10
    for minor in range(lowest, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    assert f"Programming Language :: Python :: 3.{lowest - 1}" not in classifiers
    assert project["requires-python"] == f">=3.{lowest}"
    assert "Typing :: Typed" in classifiers
    assert {"Homepage", "Source", "Changelog"} <= set(project["urls"])


@pytest.mark.parametrize("folder", FOLDERS)
def test_sdist_manifest_takes_the_tests_and_changelog(folder):
    manifest = (ROOT / folder / "MANIFEST.in").read_text().split("\n")
    assert "graft tests" in manifest
    assert any(line.startswith("include ") and "CHANGELOG.md" in line and "LICENSE" in line for line in manifest)
    if (ROOT / folder / "csrc").is_dir():
        assert "graft csrc" in manifest


@pytest.mark.parametrize("folder", FOLDERS)
def test_one_version_source(folder):
    """pyproject's static version, or a dynamic one read from one _version.py; no other literal."""
    data = _project(folder)
    project = data["project"]
    literals = [p for p in (ROOT / folder / "src").rglob("*.py")
                if re.search(r"^__version__\s*=", p.read_text(), re.M) and p.name != "_version.py"]
    assert literals == [], f"__version__ hard-coded in {literals}: import it from _version.py"
    if "version" in project:
        assert not list((ROOT / folder / "src").rglob("_version.py"))
        return
    assert project["dynamic"] == ["version"]
    attr = data["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, name = attr.rsplit(".", 1)
    path = ROOT / folder / "src" / (module.replace(".", "/") + ".py")
    assert name == "__version__" and re.fullmatch(r'(""".*"""\n)?__version__ = "\d+\.\d+\.\d+"\n',
                                                   path.read_text(), re.S)


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_dead_python_markers(folder):
    # requires-python is >=3.10: a requirement only for older Pythons is never installed.
    project = _project(folder)["project"]
    reqs = list(project.get("dependencies", []))
    reqs += [r for extra in project.get("optional-dependencies", {}).values() for r in extra]
    dead = [r for r in reqs if re.search(r"python_version\s*<\s*['\"]3\.(\d)['\"]", r)
            and int(re.search(r"python_version\s*<\s*['\"]3\.(\d)['\"]", r).group(1)) <= 9]
    assert dead == []


def test_lower_bounds_agree_across_packages():
    pins = _ci_module("lowest_constraints").lowest_pins(FOLDERS)
    assert pins[("numpy", "")][0] and pins[("scipy", "")][0]


def test_lower_bounds_are_not_below_what_the_code_needs():
    """Bounds the min-versions env showed wrong: numpy 1.x has no NEP 50 (int8 + 2**63 gave [0, 0, 0], the
    kit failed 21 times); scipy before 1.13 and ml_dtypes before 0.4 are built for numpy 1.x only."""
    pins = _ci_module("lowest_constraints").lowest_pins(FOLDERS)

    def version(name):
        return tuple(int(x) for x in pins[(name, "")][0].split("."))

    assert version("numpy") >= (2, 2, 5)  # np.from_dlpack gives read-only arrays before 2.2.5
    assert version("scipy") >= (1, 16)  # batched scipy.linalg (lu_factor, lu_solve, cholesky...)
    assert version("threadpoolctl") >= (3, 5)  # finds numpy 2's scipy-openblas
    assert version("ml-dtypes") >= (0, 4)


def test_the_mkl_extra_covers_windows():
    extras = _project("backends/cpu")["project"]["optional-dependencies"]
    for extra in ("mkl", "testing"):
        (mkl,) = [r for r in extras[extra] if r.startswith("mkl_fft")]
        assert "platform_machine == 'AMD64'" in mkl and "platform_machine == 'x86_64'" in mkl


def test_testing_extras_name_the_test_tools():
    extras = _project("backends/cpu")["project"]["optional-dependencies"]
    assert {"pytest", "hypothesis"} <= {re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in extras["testing"]}
    kit = _project("core-tensor")["project"]["optional-dependencies"]["testing"]
    assert any(r.startswith("scipy") for r in kit), "the conformance kit's scipy references need scipy declared"


# -- the CI helpers ------------------------------------------------------------------------------

def test_lowest_constraints_rejects_two_lower_bounds(tmp_path, monkeypatch):
    module = _ci_module("lowest_constraints")
    for name, bound in (("a", "1.26"), ("b", "2.0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(
            f'[project]\nname = "{name}"\ndependencies = ["numpy>={bound},<3", "flambeau-core-tensor>=0.1"]\n')
    monkeypatch.setattr(module, "ROOT", tmp_path)
    assert module.lowest_pins(["a"]) == {("numpy", ""): ("1.26", "a")}
    with pytest.raises(SystemExit, match="numpy has lower bound 1.26 in a but 2.0 in b"):
        module.lowest_pins(["a", "b"])


def test_lowest_constraints_writes_pins(tmp_path):
    out = tmp_path / "lowest.txt"
    subprocess.run([sys.executable, str(ROOT / ".ci/lowest_constraints.py"), str(out), "core-tensor", "backends/cpu"],
                   check=True, capture_output=True)
    lines = out.read_text().splitlines()
    assert any(re.fullmatch(r"numpy==\d+\.\d+(\.\d+)?", line) for line in lines)
    assert not any(line.startswith("flambeau") for line in lines)


def test_install_packages_refuses_a_first_party_dependency_from_an_index():
    # core-autograd requires flambeau-core-tensor: without its folder pip would look the name up.
    result = subprocess.run([sys.executable, str(ROOT / ".ci/install_packages.py"), "core-autograd"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "flambeau-core-tensor (required by core-autograd)" in result.stderr
    # An extra that names the CPU backend counts too.
    result = subprocess.run([sys.executable, str(ROOT / ".ci/install_packages.py"), "core-tensor[tests]"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "flambeau-backend-cpu (required by core-tensor)" in result.stderr


def test_summary_counts_and_fails(tmp_path):
    dev, tox = tmp_path / "dev", tmp_path / "tox"
    dev.mkdir(), tox.mkdir()
    (dev / "a.xml").write_text('<testsuites><testsuite tests="5" failures="0" errors="0" skipped="1"/></testsuites>')
    (tox / "core-tensor.tests.xml").write_text('<testsuite tests="3" failures="1" errors="0" skipped="0"/>')
    (tox / "lint.x.xml").write_text('<testsuite tests="0" failures="0" errors="0" skipped="0"/>')
    (tmp_path / "tox.json").write_text('{"testenvs": {"core-tensor": {"result": {"success": false}}, '
                                       '"lint": {"result": {"success": true}}, "nn": {}}}')
    result = subprocess.run([sys.executable, str(ROOT / ".ci/summary.py"), str(dev), str(tox),
                             str(tmp_path / "tox.json"), "build=0", "dev-test=0"], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout.strip().splitlines()[-1] == "total: 6 passed, 1 failed, 1 skipped"
    assert re.search(r"tox -e core-tensor\s+2 passed\s+1 failed\s+0 skipped\s+FAILED", result.stdout)
    assert re.search(r"tox -e lint\s+0 passed\s+0 failed\s+0 skipped\s+ok", result.stdout)
    assert "tox -e nn" not in result.stdout  # defined in tox.ini, not run


def test_elf_symbol_table_check(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler on Linux")
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 1; }\n")
    build = _ci_module("build_dists")
    for flags, has_symtab in (([], True), (["-s"], False)):
        lib = tmp_path / f"lib{len(flags)}.so"
        subprocess.run([cc, "-shared", "-fPIC", *flags, "-o", str(lib), str(src)], check=True)
        assert build.elf_has_symtab(lib.read_bytes()) is has_symtab
    assert build.elf_has_symtab(b"not an ELF file") is False


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_requirement_on_core_tensor_with_extras(folder):
    """Plugin discovery reads each plugin's Requires-Dist on flambeau-core-tensor at `import flambeau`;
    one with extras or markers costs the `packaging` import (~12 ms), so first-party metadata has none."""
    project = _project(folder)["project"]
    reqs = list(project.get("dependencies", []))
    reqs += [r for extra in project.get("optional-dependencies", {}).values() for r in extra]
    if project["name"] == "flambeau-core-tensor":
        return  # its own extras are not read by discovery
    assert [r for r in reqs if r.startswith("flambeau-core-tensor[")] == []


def test_min_versions_env_pins_every_folders_runtime_dependencies():
    """Each lower bound is one CI ran: tox's min-versions env feeds every folder with third-party
    runtime dependencies (the meta-package's tqdm and matplotlib too) to lowest_constraints.py."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    pre = parser["testenv:min-versions"]["commands_pre"]
    (line,) = [ln for ln in pre.splitlines() if "lowest_constraints.py" in ln]
    pinned = set(line.split()[3:])
    module = _ci_module("lowest_constraints")
    needing = {f for f in FOLDERS if f != "backends/cuda" and module.lowest_pins([f])}
    assert needing <= pinned, f"min-versions does not pin the lower bounds of {sorted(needing - pinned)}"
    assert "packages/flambeau/tests" in parser["testenv:min-versions"]["commands"]


def test_matplotlib_bound_is_built_for_numpy_2():
    # matplotlib before 3.8.4 is built against numpy 1.x: with numpy 2 its import fails
    # ("numpy.core.multiarray failed to import"); 3.8.4 with tqdm 4.62.0 passes the meta-package's tests.
    pins = _ci_module("lowest_constraints").lowest_pins(FOLDERS)
    assert tuple(int(x) for x in pins[("matplotlib", "")][0].split(".")) >= (3, 8, 4)
    assert ("tqdm", "") in pins

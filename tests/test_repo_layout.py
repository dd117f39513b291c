"""Repository-level checks: every package folder is complete, and the tooling knows about all of them.

These read the source tree (not the installed packages): they catch a package added without its
README, CHANGELOG or tests, without a tox environment, or out of the bootstrap script's install order.
"""
from __future__ import annotations

import configparser
import re
import subprocess
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the checks are the same on every Python

ROOT = Path(__file__).resolve().parent.parent
# Backends that the meta-package does not pull in: cuda needs CuPy and a GPU (it is an extra), meta
# is the example third-party backend, example the core-tier-only backend of the vendor's guide.
NOT_IN_META_PACKAGE = {"flambeau-backend-cuda", "flambeau-backend-meta", "flambeau-backend-example"}


def _pyproject(folder: str) -> dict:
    with open(ROOT / folder / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _dist_name(folder: str) -> str:
    return _pyproject(folder)["project"]["name"]


def _first_party_requirements(folder: str) -> set[str]:
    names = set()
    for req in _pyproject(folder)["project"].get("dependencies", []):
        name = re.match(r"[A-Za-z0-9._-]+", req).group(0).lower()
        if name == "flambeau" or name.startswith("flambeau-"):
            names.add(name)
    return names


def package_folders() -> list[str]:
    """The folders `./dev` installs, in its order (backends/cuda included whatever the GPU)."""
    result = subprocess.run(
        ["bash", str(ROOT / "dev"), "packages"],
        capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", "FLAMBEAU_CUDA": "1"},
    )
    return result.stdout.split()


def test_dev_finds_core_tensor_first_and_meta_package_last():
    folders = package_folders()
    assert folders[0] == "core-tensor"
    assert folders[-1] == "packages/flambeau"
    assert "backends/cpu" in folders


def test_dev_finds_every_folder_with_a_pyproject():
    on_disk = {
        str(p.parent.relative_to(ROOT))
        for pattern in ("*/pyproject.toml", "backends/*/pyproject.toml", "packages/*/pyproject.toml")
        for p in ROOT.glob(pattern)
    }
    assert set(package_folders()) == on_disk


def test_install_order_follows_dependencies():
    folders = package_folders()
    position = {_dist_name(f): i for i, f in enumerate(folders)}
    for i, folder in enumerate(folders):
        for dep in _first_party_requirements(folder):
            assert dep in position, f"{folder} depends on {dep}, which no folder of the repository provides"
            assert position[dep] < i, f"{folder} is installed before its dependency {dep}"


@pytest.mark.parametrize("folder", package_folders())
def test_package_folder_is_complete(folder):
    path = ROOT / folder
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        assert (path / name).is_file(), f"{folder} has no {name}"
    assert (path / "src").is_dir(), f"{folder} does not use the src/ layout"
    assert any((path / "tests").glob("test_*.py")), f"{folder} has no tests/test_*.py"


def test_meta_package_requires_every_first_party_library():
    wanted = {_dist_name(f) for f in package_folders() if f != "packages/flambeau"} - NOT_IN_META_PACKAGE
    assert _first_party_requirements("packages/flambeau") == wanted


def _tox_envs() -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    return {
        s.split(":", 1)[1]: parser[s].get("commands_pre", "") for s in parser.sections() if s.startswith("testenv:")
    }


def _tox_env_name(folder: str) -> str:
    if folder.startswith("backends/"):
        return "backend-" + folder.split("/", 1)[1]
    return folder.rsplit("/", 1)[-1]


def _installed_by(commands_pre: str) -> dict[str, set[str]]:
    """{folder: extras} that an env's commands_pre installs with .ci/install_packages.py."""
    folders: dict[str, set[str]] = {}
    for line in commands_pre.splitlines():
        words = line.split()
        if len(words) < 2 or not words[1].endswith(".ci/install_packages.py"):
            continue
        args = iter(words[2:])
        for word in args:
            if word in ("-c", "--constraint"):
                next(args)
                continue
            m = re.fullmatch(r"([^\[\]]+)(?:\[([^\]]*)\])?", word)
            folders[m.group(1)] = {e for e in (m.group(2) or "").split(",") if e}
    return folders


def _first_party_with_extras(folder: str, extras: set[str]) -> set[str]:
    project = _pyproject(folder)["project"]
    names = set(_first_party_requirements(folder))
    for extra in extras:
        for req in project.get("optional-dependencies", {}).get(extra, []):
            m = re.match(r"([A-Za-z0-9._-]+)(?:\[([^\]]*)\])?", req)
            name = m.group(1).lower()
            if name == project["name"]:  # pkg[testing] inside pkg's own extras
                names |= _first_party_with_extras(folder, set((m.group(2) or "").split(",")) - extras - {""})
            elif name == "flambeau" or name.startswith("flambeau-"):
                names.add(name)
    return names


@pytest.mark.parametrize("folder", package_folders())
def test_tox_has_an_environment_per_package(folder):
    envs = _tox_envs()
    env = _tox_env_name(folder)
    assert env in envs, f"tox.ini has no [testenv:{env}] for {folder}"
    # It installs the package itself and every first-party package it (and the extras it asks for)
    # depends on, from this repository: .ci/install_packages.py, never a name from an index.
    installed = _installed_by(envs[env])
    assert folder in installed, f"[testenv:{env}] does not install {folder} with .ci/install_packages.py"
    by_name = {_dist_name(f): f for f in package_folders()}
    for f, extras in installed.items():
        for dep in _first_party_with_extras(f, extras):
            assert by_name[dep] in installed, f"[testenv:{env}] does not install {dep} (needed by {f})"


def test_tox_runs_the_lowest_versions_and_lint():
    envs = _tox_envs()
    assert ".ci/lowest_constraints.py" in envs["min-versions"]
    assert "lint" in envs
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    listed = {e.strip() for e in parser["tox"]["env_list"].split(",")}
    assert {_tox_env_name(f) for f in package_folders() if f != "backends/cuda"} | {"min-versions", "lint"} <= listed

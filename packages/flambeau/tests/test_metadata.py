"""The meta-package's metadata: its console script, its pins, and the files it ships."""
from __future__ import annotations

from importlib import metadata

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

# Every first-party distribution the meta-package composes, and the release series it accepts.
EXPECTED = {
    "flambeau-core-tensor": SpecifierSet(">=0.1,<0.2"),
    "flambeau-backend-cpu": SpecifierSet(">=0.1,<0.2"),
    "flambeau-core-autograd": SpecifierSet(">=0.1,<0.2"),
    "flambeau-nn": SpecifierSet(">=0.1,<0.2"),
    "flambeau-optim": SpecifierSet(">=0.1,<0.2"),
    "flambeau-distributions": SpecifierSet(">=0.1,<0.2"),
    "flambeau-distributed": SpecifierSet(">=0.1,<0.2"),
}


def test_console_script_points_at_cli_main():
    (script,) = [ep for ep in metadata.entry_points(group="console_scripts") if ep.name == "flambeau"]
    assert script.value == "flambeau.cli:main"
    assert script.dist.name == "flambeau"
    from flambeau.cli import main

    assert script.load() is main


def test_requires_first_party_packages_with_compatible_ranges():
    requirements = [Requirement(r) for r in metadata.requires("flambeau") or []]
    pinned = {r.name: r.specifier for r in requirements if r.name.startswith("flambeau-") and not r.marker}
    assert pinned == EXPECTED


def test_installed_versions_satisfy_the_pins():
    for name, spec in EXPECTED.items():
        assert metadata.version(name) in spec, name


def test_does_not_ship_the_flambeau_package_init():
    # flambeau/__init__.py belongs to flambeau-core-tensor; the meta-package adds only flambeau/cli.
    shipped = [str(f) for f in metadata.files("flambeau") or []]
    assert "flambeau/__init__.py" not in shipped
    in_package = [f for f in shipped if f.startswith("flambeau/")]
    assert all(f.startswith("flambeau/cli/") for f in in_package), in_package
    # Nothing else importable: no other top-level module (an editable install's finder hook aside).
    top_level = [f for f in shipped if f.endswith(".py") and "/" not in f and not f.startswith("__editable__")]
    assert top_level == []


def test_flambeau_init_comes_from_core_tensor():
    import flambeau
    import flambeau.cli

    core_files = {str(f) for f in metadata.files("flambeau-core-tensor") or []}
    editable = not any(f.endswith(".py") for f in core_files)
    if not editable:
        assert "flambeau/__init__.py" in core_files
    assert flambeau.__file__.replace("\\", "/").endswith("flambeau/__init__.py")
    assert flambeau.cli.__file__.replace("\\", "/").endswith("flambeau/cli/__init__.py")
    assert flambeau.__version__ == metadata.version("flambeau-core-tensor")

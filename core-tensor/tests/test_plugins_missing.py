"""``import flambeau.nn`` (and the other first-party subpackages) without their distribution."""
from __future__ import annotations

import importlib
import sys
from importlib import metadata

import pytest
from fake_dists import FakeDist, install, run_json

import flambeau
from flambeau import _missing


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize("module, dist", sorted(_missing.SUBPACKAGES.items()))
def test_missing_subpackage_names_its_distribution(module, dist):
    if _installed(dist):
        pytest.skip(f"{dist} is installed here")
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module(module)
    assert f"'{dist}'" in str(info.value) and f"pip install {dist}" in str(info.value)
    with pytest.raises(ModuleNotFoundError, match=dist):  # a submodule names it too
        importlib.import_module(module + ".functional")


def test_from_import_form(monkeypatch):
    monkeypatch.setitem(_missing.SUBPACKAGES, "flambeau.fakepkg", "flambeau-fakepkg")
    with pytest.raises(ModuleNotFoundError, match="flambeau-fakepkg"):  # not "cannot import name"
        from flambeau import fakepkg  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="flambeau-fakepkg"):
        import flambeau.fakepkg.sub  # noqa: F401


def test_unknown_subpackage_gets_the_usual_error():
    with pytest.raises(ModuleNotFoundError, match="No module named 'flambeau.no_such_thing'") as info:
        importlib.import_module("flambeau.no_such_thing")
    assert "pip install" not in str(info.value)


def test_finder_is_installed_once_and_last():
    finders = [f for f in sys.meta_path if isinstance(f, _missing.MissingSubpackageFinder)]
    assert len(finders) == 1
    _missing.install()
    assert len([f for f in sys.meta_path if isinstance(f, _missing.MissingSubpackageFinder)]) == 1
    # after the path-based finders, so that it only answers when no installed distribution does
    path_finder = next(i for i, f in enumerate(sys.meta_path) if getattr(f, "__name__", "") == "PathFinder")
    assert sys.meta_path.index(finders[0]) > path_finder


FAKE_PACKAGE = {
    "fakesub_src/flambeau/fakesub/__init__.py": "VALUE = 42\n",
}


def test_installed_subpackage_is_found_and_its_missing_submodule_errors_plainly(tmp_path):
    # A distribution shipping only flambeau/<name>/ in its own folder: found through flambeau.__path__.
    # (A made-up subpackage: a fake flambeau-nn would meet the real one where it is installed.)
    site = install(tmp_path / "site", FakeDist("flambeau-fakesub", "0.1.0", modules=FAKE_PACKAGE))
    out = run_json(f"""
        import sys, json
        sys.path.append({str(site / 'fakesub_src')!r})
        import flambeau, flambeau.fakesub
        try:
            import flambeau.fakesub.not_there
            err = None
        except ModuleNotFoundError as exc:
            err = str(exc)
        print(json.dumps([flambeau.fakesub.VALUE, err]))
    """, site)
    assert out[0] == 42
    assert out[1] == "No module named 'flambeau.fakesub.not_there'"


def test_flambeau_path_is_extended():
    assert any(p.endswith("flambeau") for p in flambeau.__path__)


# -- the meta-package: named only where installing it would help ------------------------------

def _missing_error(site) -> str:
    """The error of importing a first-party subpackage that is not installed (``flambeau.fakenn``:
    a made-up one, so that the test holds whichever real subpackages this environment has)."""
    return run_json("""
        import json
        from flambeau import _missing
        _missing.SUBPACKAGES["flambeau.fakenn"] = "flambeau-fakenn"
        try:
            import flambeau.fakenn
        except ModuleNotFoundError as exc:
            print(json.dumps(str(exc)))
    """, site)


def test_message_with_the_meta_package_installed_without_the_distribution(tmp_path):
    # The meta-package is there and does not pin the distribution: telling the user to install it misfires.
    meta = FakeDist("flambeau", "0.1.0", requires=("flambeau-core-tensor>=0.1,<0.2", "flambeau-optim>=0.1"))
    message = _missing_error(install(tmp_path / "site", meta))
    assert "pip install flambeau-fakenn`" in message
    assert "or the meta-package" not in message
    assert "the installed meta-package `flambeau` does not include it" in message


def test_message_with_the_meta_package_that_pins_the_distribution(tmp_path):
    meta = FakeDist("flambeau", "0.1.0", requires=("flambeau-core-tensor>=0.1,<0.2", "flambeau_FAKENN>=0.1,<0.2"))
    message = _missing_error(install(tmp_path / "site", meta))
    assert "pip install flambeau-fakenn`" in message
    assert "requires it: the install is incomplete" in message


def test_message_without_the_meta_package(monkeypatch):
    def no_meta_package(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "requires", no_meta_package)
    monkeypatch.setitem(_missing.SUBPACKAGES, "flambeau.fakepkg", "flambeau-fakepkg")
    with pytest.raises(ModuleNotFoundError) as info:
        import flambeau.fakepkg  # noqa: F401
    assert str(info.value) == ("No module named 'flambeau.fakepkg': it is provided by the distribution "
                               "'flambeau-fakepkg'. Install it with `pip install flambeau-fakepkg`.")


@pytest.mark.parametrize("requirement, name", [
    ("flambeau-nn>=0.1,<0.2", "flambeau-nn"), ("Flambeau_NN[extra] ; python_version>'3'", "flambeau-nn"),
    ("flambeau.nn (>=0.1)", "flambeau-nn"), ("flambeau-nn~=0.1", "flambeau-nn"), ("flambeau", "flambeau"),
])
def test_requirement_name(requirement, name):
    assert _missing._requirement_name(requirement) == name

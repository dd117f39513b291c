"""flambeau._portions.extend_path: the portions pkgutil.extend_path finds, without importing pkgutil."""
from __future__ import annotations

import pkgutil
import sys

import flambeau
import flambeau.utils
from flambeau._portions import extend_path


def test_flambeau_and_utils_paths_are_pkgutils():
    assert flambeau.__path__ == pkgutil.extend_path(flambeau.__path__[:1], "flambeau")
    assert flambeau.utils.__path__ == pkgutil.extend_path(flambeau.utils.__path__[:1], "flambeau.utils")


def test_a_package_split_over_two_folders(tmp_path, monkeypatch):
    for folder in ("one", "two"):
        (tmp_path / folder / "splitpkg" / "inner").mkdir(parents=True)
    (tmp_path / "one" / "splitpkg" / "__init__.py").write_text("")
    (tmp_path / "two" / "splitpkg" / "extra.py").write_text("X = 2\n")
    (tmp_path / "one" / "splitpkg" / "inner" / "__init__.py").write_text("")
    (tmp_path / "two" / "splitpkg" / "inner" / "more.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "two"))
    monkeypatch.syspath_prepend(str(tmp_path / "one"))
    monkeypatch.setattr(sys, "path", sys.path + [42])  # a non-string entry is skipped, as pkgutil does
    first = [str(tmp_path / "one" / "splitpkg")]
    got = extend_path(list(first), "splitpkg")
    assert got == pkgutil.extend_path(list(first), "splitpkg")
    assert got == first + [str(tmp_path / "two" / "splitpkg")]
    # A subpackage searches its parent's __path__; no parent imported: the path is left as it is.
    assert extend_path(["x"], "nosuchparent.inner") == ["x"]
    monkeypatch.setitem(sys.modules, "splitpkg", type(sys)("splitpkg"))
    sys.modules["splitpkg"].__path__ = got
    inner = [str(tmp_path / "one" / "splitpkg" / "inner")]
    assert extend_path(list(inner), "splitpkg.inner") == pkgutil.extend_path(list(inner), "splitpkg.inner") \
        == inner + [str(tmp_path / "two" / "splitpkg" / "inner")]
    assert extend_path(("t",), "splitpkg") == ("t",)  # not a list: returned as it is

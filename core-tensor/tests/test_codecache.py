"""The on-disk cache of generated op functions' code objects (flambeau/ops/_codecache.py)."""
from __future__ import annotations

import marshal
import sys

import pytest
from flambeau.ops import _codecache

SOURCE = "def twice(x):\n    return 2 * x\n"


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache file location and empty in-memory state, restored afterwards."""
    path = tmp_path / "codes.marshal"
    monkeypatch.setattr(_codecache, "_path", lambda: str(path))
    monkeypatch.setattr(_codecache, "_loaded", None)
    monkeypatch.setattr(_codecache, "_used", {})
    monkeypatch.setattr(_codecache, "_missed", False)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def _run(code):
    namespace: dict = {}
    exec(code, namespace)
    return namespace["twice"](21)


def test_compiles_saves_and_reuses(fresh_cache, monkeypatch):
    code = _codecache.compiled(SOURCE, "<test twice>")
    assert _run(code) == 42
    _codecache.save()
    assert fresh_cache.exists()
    # A new process: the cached code object is used and compile() is never called.
    monkeypatch.setattr(_codecache, "_loaded", None)
    monkeypatch.setattr(_codecache, "_used", {})
    monkeypatch.setattr(_codecache, "_missed", False)

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled although cached")

    monkeypatch.setattr(_codecache, "compile", no_compile, raising=False)
    again = _codecache.compiled(SOURCE, "<test twice>")
    assert _run(again) == 42 and again.co_filename == "<test twice>"


def test_changed_source_is_a_miss(fresh_cache):
    _codecache.compiled(SOURCE, "<test twice>")
    _codecache.save()
    _codecache._loaded = None
    changed = SOURCE.replace("2 * x", "3 * x")
    assert _run(_codecache.compiled(changed, "<test twice>")) == 63
    assert _codecache._missed


@pytest.mark.parametrize("content", [b"", b"not marshal data", marshal.dumps((b"xxxx", 1, {SOURCE: 1}))])
def test_corrupt_or_foreign_file_is_ignored(fresh_cache, content):
    fresh_cache.write_bytes(content)
    assert _run(_codecache.compiled(SOURCE, "<test twice>")) == 42


def test_no_write_without_bytecode_writing(fresh_cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _codecache.compiled(SOURCE, "<test twice>")
    _codecache.save()
    assert not fresh_cache.exists()


def test_unwritable_location_is_silent(tmp_path, fresh_cache, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(_codecache, "_path", lambda: str(blocker / "sub" / "codes.marshal"))
    _codecache.compiled(SOURCE, "<test twice>")
    _codecache.save()  # must not raise


def test_generated_functions_come_from_the_cache():
    import flambeau as fb
    from flambeau.ops._registry import FUNCTIONS

    add = FUNCTIONS["add"]
    module_code = _codecache._used.get(add._source)
    assert module_code is not None and add.__code__ in module_code.co_consts
    assert fb.add(fb.ones(2), 1).tolist() == [2.0, 2.0]

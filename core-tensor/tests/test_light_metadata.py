"""The readers that keep ``import flambeau`` off importlib.metadata and inspect.signature agree with them:
plugins/_entry_points (entry points, names, versions, requirements) and ops/_registry.code_parameters."""
from __future__ import annotations

import functools
import inspect
import sys
from importlib import metadata

import pytest
from flambeau.ops._registry import code_parameters
from flambeau.plugins import _entry_points
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_dists import FakeDist, install


def _ours():
    return sorted((ep.group, ep.name, ep.value, ep.dist.metadata.get("Name"), ep.dist.version,
                   tuple(ep.dist.requires or ())) for ep in _entry_points.entry_points()
                  if ep.group.startswith("flambeau"))


def _theirs():
    return sorted((ep.group, ep.name, ep.value, ep.dist.metadata["Name"], ep.dist.version,
                   tuple(ep.dist.requires or ())) for ep in _entry_points.importlib_metadata_entry_points()
                  if ep.group.startswith("flambeau"))


def test_entry_points_agree_with_importlib_metadata():
    assert _ours() == _theirs() and _ours()


def test_entry_points_agree_with_importlib_metadata_for_tricky_installs(tmp_path, monkeypatch):
    # a second copy of an installed distribution later on sys.path (the first wins), folded and
    # repeated headers, comments in entry_points.txt, a distribution without METADATA
    first = FakeDist(name="flambeau-fakeops", version="1.0", requires=["flambeau-core-tensor<0.2,>=0.1", "numpy"],
                     entry_points={"flambeau": {"fakeops": "flambeau_fakeops.plugin:Plugin"}})
    second = FakeDist(name="flambeau-fakeops", version="2.0",
                      entry_points={"flambeau": {"fakeops": "other:Plugin"}})
    bare = FakeDist(name="flambeau-bare", version="0.3", entry_points={"flambeau.backends": {"bare": "bare:make"}})
    bare.no_metadata = True
    install(tmp_path / "a", first, bare)
    install(tmp_path / "b", second)
    info = tmp_path / "a" / "flambeau_fakeops-1.0.dist-info"
    (info / "METADATA").write_text((info / "METADATA").read_text() + "Summary: two\n  lines\n\nBody: not a header\n")
    ep_file = info / "entry_points.txt"
    ep_file.write_text("# a comment\n; another\n" + ep_file.read_text())
    monkeypatch.setattr(sys, "path", [str(tmp_path / "a"), str(tmp_path / "b"), *sys.path])
    assert _ours() == _theirs()
    [ours] = [ep for ep in _entry_points.entry_points() if ep.name == "fakeops"]
    assert ours.dist.metadata.get("Summary") == "two lines" and ours.dist.metadata.get("Body") is None
    [bare_ep] = [ep for ep in _entry_points.entry_points() if ep.name == "bare"]
    assert bare_ep.dist.metadata.get("Name") is None and bare_ep.dist._path.name == "flambeau_bare-0.3.dist-info"


def test_version_and_load():
    assert _entry_points.version("flambeau-core-tensor") == metadata.version("flambeau-core-tensor")
    assert _entry_points.version("Flambeau_Core.Tensor") == metadata.version("flambeau-core-tensor")
    assert _entry_points.version("no-such-distribution-xyz") is None
    ep = _entry_points.EntryPoint("x", "os.path:join", "g", None)
    assert ep.load() is __import__("os").path.join
    assert _entry_points.EntryPoint("x", "os.path", "g", None).load() is __import__("os").path
    with pytest.raises(ModuleNotFoundError):
        _entry_points.EntryPoint("x", "no_such_module_xyz:f", "g", None).load()


def test_a_zip_on_sys_path_goes_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "x.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert _entry_points._needs_importlib_metadata()
    assert _ours() == _theirs()


# -- code_parameters ---------------------------------------------------------------------------

@st.composite
def python_signatures(draw):
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "out", "input", "x"]), unique=True, max_size=5))
    n_pos_only = draw(st.integers(0, len(names)))
    n_kw = draw(st.integers(0, len(names) - n_pos_only))
    pos, kw = names[:len(names) - n_kw], names[len(names) - n_kw:]
    defaults_from = draw(st.integers(0, len(pos)))
    parts = [f"{n}=1" if i >= defaults_from else n for i, n in enumerate(pos)]
    if n_pos_only and pos:
        parts.insert(min(n_pos_only, len(pos)), "/")
    if draw(st.booleans()):
        parts.append("*args")
    elif kw:
        parts.append("*")
    parts += [f"{n}=2" if draw(st.booleans()) else n for n in kw]
    if draw(st.booleans()):
        parts.append("**kwargs")
    return "(" + ", ".join(parts) + ")"


def _from_inspect(fn):
    params = list(inspect.signature(fn).parameters.values())
    names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    varkw = any(p.kind is p.VAR_KEYWORD for p in params)
    plain = all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
    return names, varargs, varkw, plain


@settings(max_examples=150, deadline=None)
@given(python_signatures(), st.integers(0, 2))
def test_code_parameters_agree_with_inspect(sig, wraps):
    ns: dict = {}
    exec(f"def f{sig}: pass", ns)
    fn = ns["f"]
    for _ in range(wraps):  # functools.wraps chains: inspect follows __wrapped__, so must we
        fn = functools.wraps(fn)(lambda *a, **k: None)
    assert code_parameters(fn) == _from_inspect(fn)


def test_code_parameters_leave_the_rest_to_inspect():
    def f(a, b):
        pass

    f.__signature__ = inspect.Signature([inspect.Parameter("z", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    assert code_parameters(f) is None
    assert code_parameters(functools.partial(f, 1)) is None
    assert code_parameters(len) is None
    assert code_parameters(str.join) is None
    assert code_parameters(object().__str__) is None

"""core-tensor's modules stand in layers a newcomer can draw (core-tensor/README.md, "Layers").

Read from the source with :mod:`flambeau.testing._import_graph` (nothing is imported): every
import, at module level or inside a function, goes to a module of the same or a lower layer; no
import cycle exists at module level, nor, below the public namespaces, through function-level
imports either. What a lower layer needs from a higher one is bound in one place,
``flambeau/_late_bindings.py`` (top layer), which assigns into the lower layers once, before any
plugin loads.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import flambeau
from flambeau.testing._import_graph import Layers, import_graph, strongly_connected_components

SOURCE = Path(flambeau.__file__).parent

#: Lowest first. A module belongs to the first layer with a pattern that matches its name.
LAYERS = Layers([
    ("foundations: dtypes, devices, sizes, layouts, grad-mode state, plugin metadata", (
        "flambeau._version", "flambeau._missing", "flambeau._dtypes", "flambeau._device", "flambeau._size",
        "flambeau._layout", "flambeau._grad_mode", "flambeau.return_types",
        "flambeau.plugins", "flambeau.plugins._backend", "flambeau.plugins._hookspecs",
        "flambeau.plugins._entry_points", "flambeau.plugins._isolation", "flambeau.plugins._discovery",
        "flambeau.ops._decl", "flambeau.ops.sizes", "flambeau.ops._uses", "flambeau.ops.matrix_exp_plan",
        "flambeau.ops._templates",
    )),
    ("registry: declared ops, kernel tables, generated functions", (
        "flambeau.ops._registry", "flambeau.ops._checks",
    )),
    ("Tensor", (
        "flambeau._tensor",
    )),
    ("dispatcher: op functions and their helpers, creation, conversion, indexing, repr, generators", (
        "flambeau.ops", "flambeau.ops._dispatch", "flambeau.ops._codegen", "flambeau.ops.meta", "flambeau._creation",
        "flambeau._conversion", "flambeau._indexing", "flambeau._tensor_repr", "flambeau._generator",
    )),
    ("op declarations", (
        "flambeau._core_ops", "flambeau._core_ops.*",
    )),
    ("public namespaces, plugin loading, late bindings", ("*",)),
])
PUBLIC = len(LAYERS.layers) - 1

#: Modules allowed to import from a higher layer inside functions, with why. None: the one place
#: for late bindings, flambeau._late_bindings, is in the top layer and only imports down.
LATE_IMPORTS: dict[str, str] = {}


@pytest.fixture(scope="module")
def graph():
    return import_graph(SOURCE, "flambeau")


def test_every_pattern_names_a_module(graph):
    # A renamed or deleted module must not leave a stale line behind (nor a module of a low layer
    # fall silently into the top one).
    assert LAYERS.stale_patterns(graph) == []
    assert set(LATE_IMPORTS) <= graph.modules


def test_module_level_imports_go_down(graph):
    assert LAYERS.upward(graph, graph.module_level) == []


def test_function_level_imports_go_down(graph):
    assert LAYERS.upward(graph, graph.function_level, allowed=LATE_IMPORTS) == []


def test_no_module_level_cycle(graph):
    assert strongly_connected_components(graph.module_level) == []


def test_no_cycle_below_the_public_namespaces(graph):
    assert LAYERS.cycles_below(graph, PUBLIC, skip=LATE_IMPORTS) == []


def test_late_bound_names_are_installed():
    # The registry's loader slot and flambeau.plugins' loader functions, bound by _late_bindings.bind.
    from flambeau import plugins
    from flambeau.ops import _registry
    from flambeau.plugins import _loader

    assert _registry.LOADER is _loader
    for name in plugins._LOADER_NAMES:
        assert getattr(plugins, name) is getattr(_loader, name), name
    assert set(plugins._LOADER_NAMES) <= set(plugins.__all__)


def test_late_bound_tensor_methods_are_installed():
    # The Tensor's methods that the dispatcher layer defines are bound by flambeau._late_bindings,
    # each to the function that _tensor.LATE_METHODS names.
    from flambeau import _tensor

    for name, where in _tensor.LATE_METHODS.items():
        module, _, function = where.split(" ")[0].rpartition(".")
        expected = getattr(__import__(module, fromlist=[function]), function)
        got = _tensor.Tensor.__dict__[name]
        assert (got.__func__ if isinstance(got, staticmethod) else got) is expected, name


def test_layer_violation_is_reported(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from . import high\n")
    (pkg / "high.py").write_text("from . import low\n")
    g = import_graph(pkg)
    layers = Layers([("low", ("pkg.low",)), ("rest", ("*",))])
    assert layers.upward(g, g.module_level) == []
    assert layers.upward(g, g.function_level) == ["pkg.low (layer 0, line 2) imports pkg.high (layer 1)"]
    assert layers.upward(g, g.function_level, allowed=["pkg.low"]) == []
    assert layers.cycles_below(g, 2) == [["pkg.high", "pkg.low"]]
    assert Layers([("gone", ("pkg.gone",)), ("rest", ("*",))]).stale_patterns(g) == ["pkg.gone"]


def test_graph_reader_sees_imports(tmp_path):
    # The reader itself: module- and function-level edges, relative imports, TYPE_CHECKING left out,
    # `from package import module` resolved to the module, and cycles found.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nfrom .sub import b\n"
                              "if TYPE_CHECKING:\n    from . import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (pkg / "c.py").write_text("import pkg.a\nx = 1\n")
    g = import_graph(pkg)
    # pkg.a's import of pkg.sub.b runs pkg/sub/__init__.py first: an edge to pkg.sub too.
    assert g.module_level == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.sub", "pkg.sub.b"}, "pkg.sub": set(), "pkg.sub.b": set(),
                              "pkg.c": {"pkg.a"}}
    assert g.function_level["pkg.sub.b"] == {"pkg.c"}
    assert strongly_connected_components(g.module_level) == []
    both = {m: g.module_level[m] | g.function_level[m] for m in g.modules}
    assert strongly_connected_components(both) == [["pkg.a", "pkg.c", "pkg.sub.b"]]

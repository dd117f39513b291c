"""core-autograd's modules stand in layers (core-autograd/README.md, "Layers"), read from the source
with core-tensor's :mod:`flambeau.testing._import_graph`: every import goes to the same or a lower
layer, and no import cycle exists, at module level or through function-level imports below the
public modules. The one binding that points up, ``_node.view_of_base``, is made by
``_plugin.Engine.install``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import flambeau.autograd
from flambeau.testing._import_graph import Layers, import_graph, strongly_connected_components

SOURCE = Path(flambeau.autograd.__file__).parent

#: Lowest first. A module belongs to the first layer with a pattern that matches its name.
LAYERS = Layers([
    ("modes: grad mode, anomaly detection", (
        "flambeau.autograd.grad_mode", "flambeau.autograd.anomaly_mode",
    )),
    ("formulas: the Formula type and every op's backward", (
        "flambeau.autograd.formula", "flambeau.autograd._formulas", "flambeau.autograd._formulas.*",
    )),
    ("graph nodes and saved tensors", (
        "flambeau.autograd._node",
    )),
    ("backward engine and generated recorders", (
        "flambeau.autograd._engine", "flambeau.autograd._fastpath",
    )),
    ("recording", (
        "flambeau.autograd._graph",
    )),
    ("public API, Tensor methods, the plugin", ("*",)),
])
PUBLIC = len(LAYERS.layers) - 1


@pytest.fixture(scope="module")
def graph():
    return import_graph(SOURCE, "flambeau.autograd")


def test_every_pattern_names_a_module(graph):
    assert LAYERS.stale_patterns(graph) == []


def test_imports_go_down(graph):
    assert LAYERS.upward(graph, graph.module_level) == []
    assert LAYERS.upward(graph, graph.function_level) == []


def test_no_cycle(graph):
    assert strongly_connected_components(graph.module_level) == []
    assert LAYERS.cycles_below(graph, PUBLIC) == []


def test_the_late_binding_is_made():
    from flambeau.autograd import _graph, _node

    assert _node.view_of_base is _graph.view_of_base

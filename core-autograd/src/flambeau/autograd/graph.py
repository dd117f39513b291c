"""``flambeau.autograd.graph``: the node type of ``grad_fn`` objects."""
from __future__ import annotations

from ._node import AccumulateGrad, Node, RemovableHandle

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]

"""core-autograd as a flambeau plugin: the engine for the dispatcher's slot, and the formulas."""
from __future__ import annotations

from typing import Any

from flambeau.plugins import hookimpl

from ._graph import Recorder
from .grad_mode import STATE


class Engine(Recorder):
    """Fills ``flambeau.ops._dispatch``'s recording slot: records ops, runs backward."""

    def set_requires_grad(self, tensor: Any, flag: bool) -> None:
        if tensor.grad_fn is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                )
            return
        if flag and not (tensor._dtype.is_floating_point or tensor._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if flag and len(tensor._version_counter) != 1 and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        tensor._requires_grad = flag

    def backward(self, tensor: Any, gradient: Any, retain_graph: Any, create_graph: bool, inputs: Any) -> None:
        from ._api import backward

        backward(tensor, gradient, retain_graph, create_graph, inputs=inputs)

    def install(self) -> None:
        """Bind what the lower modules need from above, then add the autograd methods to Tensor."""
        from . import _graph, _node
        from ._tensor_api import install

        _node.view_of_base = _graph.view_of_base  # refresh_view (in _node) replays a view's history
        install()


ENGINE = Engine()


@hookimpl
def flambeau_autograd_engine() -> Engine:
    return ENGINE


@hookimpl
def flambeau_register_gradients() -> dict[str, Any]:
    # Stand-ins: each family's module is imported when autograd first records one of its ops.
    from ._formulas import deferred_formulas

    return deferred_formulas()

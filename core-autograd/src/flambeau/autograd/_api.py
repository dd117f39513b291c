"""``flambeau.autograd.backward`` and ``flambeau.autograd.grad``."""
from __future__ import annotations

from typing import Any

from flambeau._tensor import Tensor

from ._engine import execute, make_root_grads, root_edge
from ._node import accumulate_retained, accumulator, edge

_TensorOrTensors = Any


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors: _TensorOrTensors, grad_tensors: _TensorOrTensors = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None, inputs: _TensorOrTensors = None) -> None:
    """Accumulate the gradients of ``tensors`` with respect to graph leaves into their ``.grad``.

    Args:
        tensors (Sequence[Tensor] or Tensor): outputs to differentiate.
        grad_tensors (Sequence[Tensor or None] or Tensor, optional): the gradient with respect to each
            output (``None`` for a scalar output means ``ones``).
        retain_graph (bool, optional): keep the graph for another backward (default: ``create_graph``).
        create_graph (bool): record the backward pass itself, for higher-order derivatives.
        inputs (Sequence[Tensor] or Tensor, optional): accumulate only into these tensors'
            ``.grad`` (leaves or not); by default every leaf of the graph.

    Example::

        >>> x = flambeau.tensor([1., 2.], requires_grad=True)
        >>> flambeau.autograd.backward((x * x).sum())
        >>> x.grad
        tensor([2., 4.])
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if not tensors:
        raise RuntimeError("backward() got an empty list of tensors")
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    inputs_t = _as_tuple(inputs)
    if inputs is not None and not inputs_t:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = make_root_grads(tensors, grads)
    edges = [root_edge(t, i) for i, t in enumerate(tensors)]
    if not inputs_t:
        execute(edges, grads, retain_graph, create_graph)
        return
    leaves, capture, non_leaves = set(), [], []
    for t in inputs_t:
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): inputs must be Tensors, not {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t.grad_fn is None:
            leaves.add(accumulator(t))
        else:
            capture.append(edge(t))
            non_leaves.append(t)
    got = execute(edges, grads, retain_graph, create_graph, capture=capture, accumulate_into=leaves)
    for t, g in zip(non_leaves, got):
        if g is not None:
            accumulate_retained(t, g)


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors, grad_outputs: _TensorOrTensors = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated.

    Args:
        outputs (Sequence[Tensor] or Tensor): outputs to differentiate.
        inputs (Sequence[Tensor] or Tensor): the tensors to differentiate with respect to.
        grad_outputs (Sequence[Tensor or None] or Tensor, optional): the vector in the
            vector-Jacobian product (``None`` for a scalar output means ``ones``).
        retain_graph (bool, optional): keep the graph (default: ``create_graph``).
        create_graph (bool): record the backward pass, so that the result can be differentiated.
        allow_unused (bool, optional): return ``None`` for inputs the outputs do not depend on
            instead of raising (default: ``materialize_grads``).
        materialize_grads (bool): return zeros instead of ``None`` for unused inputs.

    Returns:
        tuple[Tensor or None, ...]: one gradient per input.

    Example::

        >>> x = flambeau.tensor(3., requires_grad=True)
        >>> (g,) = flambeau.autograd.grad(x ** 3, x, create_graph=True)
        >>> flambeau.autograd.grad(g, x)
        (tensor(18.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise RuntimeError("grad(): is_grads_batched=True needs vmap, which flambeau does not provide")
    outputs_t = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs_t)
    if len(grads) != len(outputs_t):
        raise RuntimeError(f"grad_outputs should have the same length as outputs: got {len(grads)} and "
                           f"{len(outputs_t)}")
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs_t:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, not {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = make_root_grads(outputs_t, grads)
    edges = [root_edge(t, i) for i, t in enumerate(outputs_t)]
    capture = [edge(t) for t in inputs_t]
    got = execute(edges, grads, retain_graph, create_graph, capture=capture, accumulate_into=set())
    result = []
    for t, g in zip(inputs_t, got):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                import flambeau

                g = flambeau.zeros_like(t)
        elif not create_graph and g._requires_grad:
            g = g.detach()
        result.append(g)
    return tuple(result)

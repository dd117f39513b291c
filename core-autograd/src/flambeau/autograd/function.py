"""``flambeau.autograd.Function``: operations with a hand-written backward.

Subclass it with static ``forward`` and ``backward`` and call ``YourFunction.apply(...)``.
``forward(ctx, *args)`` runs without recording; the outputs get one node whose backward is
``backward(ctx, *grad_outputs)``. The ``ctx`` object *is* that node (``grad_fn``), as in PyTorch.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from flambeau._tensor import Tensor

from ._node import NO_EDGE, Node, SavedTensor, TensorMeta, alias, edge
from .grad_mode import STATE


class FunctionCtx:
    """The methods a custom Function's ``ctx`` offers (mixed into each Function's node class)."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or ``None``) for ``backward``; read them back with ``ctx.saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare the inputs that ``forward`` modified in place (they must be returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that are not differentiable (they will not require grad)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (True, the default) or ``None`` for outputs without a gradient."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = self.__dict__.get("_saved")
        if saved is None:
            to_save = self.__dict__.get("_to_save", ())
            if to_save and not self.__dict__.get("_forward_done", True):
                return tuple(to_save)
            return ()
        if self._freed:
            from ._node import FREED_MESSAGE

            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack(self) for s in saved)

    saved_variables = saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call; also the ``ctx`` its forward and backward see."""

    _function: Any = None

    def __init__(self) -> None:
        Node.__init__(self, (), ())
        self.needs_input_grad: tuple = ()
        self._materialize = True
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._to_save: tuple = ()
        self._saved: list | None = None
        self._freed = False
        self._out_meta: list = []
        self._forward_done = False
        self._n_out = 1

    def apply(self, grads: list) -> list:
        fn = self._function
        if self._materialize:
            import flambeau

            grads = [g if g is not None or m is None else flambeau.zeros(m[0], dtype=m[1], device=m[2])
                     for g, m in zip(grads, self._out_meta)]
        result = fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_functions)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        return list(result)

    def release(self) -> None:
        self._freed = True
        for s in self._saved or ():
            if s is not None:
                s.tensor = None


class DelayedError(Node):
    """Stands for a once-differentiable backward's result: differentiating it again raises."""

    def __init__(self, message: str, edges: tuple, in_meta: tuple) -> None:
        super().__init__(edges, in_meta)
        self._message = message

    def apply(self, grads: list) -> list:
        raise RuntimeError(self._message)


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_function": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for operations with a custom backward.

    Example::

        >>> class Exp(flambeau.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         result = x.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (result,) = ctx.saved_tensors
        ...         return grad * result
        >>> y = Exp.apply(flambeau.tensor([0.], requires_grad=True))

    ``forward`` may instead take only the inputs, with a separate
    ``setup_context(ctx, inputs, output)`` that saves what backward needs.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#flambeau.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        prev = STATE.enabled
        STATE.enabled = False
        try:
            if separate:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            STATE.enabled = prev
        if separate:
            cls.setup_context(ctx, args, output)
        ctx._forward_done = True
        record = prev and any(ctx.needs_input_grad)
        return _wrap_outputs(ctx, args, output, record)


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, output: Any, record: bool) -> Any:
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty_ids = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    if record:
        ctx.next_functions = tuple(edge(a) if isinstance(a, Tensor) and a._requires_grad else NO_EDGE for a in args)
        ctx._in_meta = tuple((a._data.shape, a._dtype) if isinstance(a, Tensor) else None for a in args)
    new_outputs = []
    for nr, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            new_outputs.append(o)
            ctx._out_meta.append(None)
            continue
        if id(o) in input_ids and id(o) not in dirty_ids:
            o = alias(o)  # an input returned unchanged: a new tensor, as PyTorch's view_as(input)
        differentiable = (o._dtype.is_floating_point or o._dtype.is_complex) and id(outputs[nr]) not in non_diff
        ctx._out_meta.append((tuple(o.shape), o._dtype, o._device) if differentiable else None)
        if record and differentiable:
            if id(o) in dirty_ids and o._requires_grad and o.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            o._requires_grad = True
            o.grad_fn = ctx
            if nr:
                o._autograd = TensorMeta(nr)
        elif record and id(o) in non_diff:
            o._requires_grad = False
        new_outputs.append(o)
    ctx._n_out = len(outputs)
    if record:
        out_ids = {id(orig): nr for nr, orig in enumerate(outputs)}
        saved = []
        for t in ctx._to_save:
            if t is None:
                saved.append(None)
            elif id(t) in out_ids and t.grad_fn is ctx:
                saved.append(SavedTensor(new_outputs[out_ids[id(t)]], True, out_ids[id(t)]))
            else:
                saved.append(SavedTensor(t))
        ctx._saved = saved
    else:
        ctx._saved = [None if t is None else SavedTensor(t) for t in ctx._to_save]
    ctx._to_save = ()
    return new_outputs[0] if single else tuple(new_outputs)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a Function's ``backward`` as not differentiable again.

    It then runs without recording; when the graph is being recorded (``create_graph=True``)
    and an input needs a gradient, differentiating its results raises.
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        prev = STATE.enabled
        STATE.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            STATE.enabled = prev
        if not prev:
            return outputs
        grads_in = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not grads_in:
            return outputs
        err = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                           tuple(edge(a) for a in grads_in), tuple((a._data.shape, a._dtype) for a in grads_in))
        single = not isinstance(outputs, tuple)
        wrapped = []
        for o in ((outputs,) if single else outputs):
            if isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex):
                o = alias(o)
                o._requires_grad = True
                o.grad_fn = err
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper

"""``flambeau.utils.checkpoint``: activation checkpointing (torch.utils.checkpoint's API).

A checkpointed function runs its forward without recording a graph, keeping only its inputs; the
backward pass runs it again, with gradients and with the random state the forward saw (so that
dropout draws the same mask), and differentiates that recomputation. Memory traded for compute.

This module ships with flambeau-core-autograd (it is a custom ``autograd.Function``); it lives in
the ``flambeau.utils`` namespace that core-tensor opens (``flambeau.utils.data`` is core-tensor's).
Both ``use_reentrant`` modes run the same mechanism here (a custom Function whose backward
recomputes and runs a nested backward pass): the gradients of tensors the function closes over
(parameters) accumulate into their ``.grad``. What the non-reentrant mode adds, as PyTorch's: keyword
arguments, ``context_fn``, and a graph even when no argument requires grad, as long as the function
is (or is bound to) a Module with parameters that do. Neither mode supports ``autograd.grad`` with
respect to closed-over parameters (PyTorch's reentrant mode refuses it too).
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator

import flambeau
from flambeau import Tensor
from flambeau.autograd import Function

__all__ = ["checkpoint", "checkpoint_sequential"]


def noop_context_fn() -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """The default ``context_fn``: no context around either the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def _rng_restored(state: Tensor | None) -> Iterator[None]:
    """Run the body with the CPU generator set to ``state``, then put the current state back."""
    if state is None:
        yield
        return
    current = flambeau.get_rng_state()
    flambeau.set_rng_state(state)
    try:
        yield
    finally:
        flambeau.set_rng_state(current)


def _module_parameters(function: Any) -> list[Tensor]:
    """The parameters a function reaches through a Module it is or is bound to (non-reentrant mode)."""
    owner = function if hasattr(function, "parameters") else getattr(function, "__self__", None)
    params = getattr(owner, "parameters", None)
    if not callable(params):
        return []
    try:
        return [p for p in params() if isinstance(p, Tensor)]
    except TypeError:
        return []


class _CheckpointFunction(Function):
    """Forward without a graph; backward recomputes with one and differentiates it.

    Inputs: ``(run, state, *args, *extra)`` where ``state`` holds the settings and how many of the
    inputs are ``args``; ``extra`` are parameters the function reads without taking them as
    arguments (non-reentrant mode): inputs only so that the graph is recorded for them; their
    gradients accumulate in the nested backward pass.
    """

    @staticmethod
    def forward(ctx: Any, run: Callable[..., Any], state: dict, *inputs: Any) -> Any:
        n = state["n_args"]
        args = inputs[:n]
        ctx.run, ctx.state = run, state
        ctx.rng_state = flambeau.get_rng_state() if state["preserve_rng_state"] else None
        ctx.tensor_index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.non_tensors = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_index))
        with state["forward_context"]:
            return run(*args)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        state = ctx.state
        args = list(ctx.non_tensors)
        detached = []
        for i, t in zip(ctx.tensor_index, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            args[i] = d
            detached.append(d)
        with _rng_restored(ctx.rng_state), flambeau.enable_grad(), state["recompute_context"]:
            outputs = ctx.run(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        outs, grads = [p[0] for p in pairs], [p[1] for p in pairs]
        # gradients accumulate into every leaf the recomputation reached: the detached inputs, and
        # the parameters the function closes over (their .grad, as a plain run would)
        flambeau.autograd.backward(outs, grads)
        input_grads: list[Any] = [None] * state["n_args"]
        for i, d in zip(ctx.tensor_index, detached):
            input_grads[i] = d.grad
        extra_grads = [None] * len(state["extra"])
        return (None, None, *input_grads, *extra_grads)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    r"""Run ``function(*args, **kwargs)`` without keeping its intermediate activations; recompute
    them in the backward pass.

    Args:
        function: what to run (a Module, a bound method or any callable).
        args: its inputs.
        use_reentrant: PyTorch's two implementations; pass it explicitly (None warns and means True).
            The reentrant one takes no keyword arguments for ``function``.
        context_fn: returns two context managers, one around the forward, one around the
            recomputation (non-reentrant mode only).
        determinism_check: ``"default"`` or ``"none"`` (accepted; shapes are not re-checked).
        debug: accepted for PyTorch compatibility (non-reentrant mode only).
        preserve_rng_state: restore the random state of the forward for the recomputation, so that
            random ops (dropout) draw the same values.

    Returns:
        What ``function`` returns.
    """
    if use_reentrant is None:
        warnings.warn("flambeau.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        run, extra = function, []
        forward_context, recompute_context = contextlib.nullcontext(), contextlib.nullcontext()
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args) and flambeau.is_grad_enabled():
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    else:
        run = (lambda *a: function(*a, **kwargs)) if kwargs else function
        extra = [p for p in _module_parameters(function) if p.requires_grad]
        forward_context, recompute_context = context_fn()
    state = {"n_args": len(args), "preserve_rng_state": preserve_rng_state, "reentrant": bool(use_reentrant),
             "extra": extra, "forward_context": forward_context, "recompute_context": recompute_context}
    return _CheckpointFunction.apply(run, state, *args, *extra)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    r"""Run a sequence of functions (or a ``Sequential``) in ``segments`` checkpointed chunks.

    Every segment but the last is checkpointed; the last runs normally (its activations are needed
    at once by the backward pass).

    Args:
        functions: a ``Sequential`` or a list of modules/functions run one after the other.
        segments: how many chunks.
        input: the first function's input.
        use_reentrant: as in :func:`checkpoint`.
        preserve_rng_state (keyword): as in :func:`checkpoint`.
    """
    if use_reentrant is None:
        warnings.warn("flambeau.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                      "passed explicitly. use_reentrant=False is recommended, but if you need to preserve the "
                      "current default behavior, you can pass use_reentrant=True.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    children = getattr(functions, "children", None)
    fns: list[Callable[..., Any]] = list(children()) if callable(children) else list(functions)
    if segments <= 0:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got {segments}")
    size = len(fns) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_Segment(fns[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _Segment(fns[end + 1:])(input)


class _Segment:
    """A run of functions whose parameters the non-reentrant mode can see (``parameters()``)."""

    def __init__(self, functions: list[Callable[..., Any]]) -> None:
        self.functions = functions

    def __call__(self, input: Any) -> Any:
        for f in self.functions:
            input = f(input)
        return input

    def parameters(self) -> Iterator[Tensor]:
        seen: set[int] = set()
        for f in self.functions:
            for p in _module_parameters(f):
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p

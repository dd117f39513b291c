"""Hook plumbing of ``Module``: removable handles, the global module hooks, full backward hooks."""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Any, Callable

from flambeau import Tensor
from flambeau.autograd import Function

__all__ = ["RemovableHandle", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_parameter_registration_hook",
           "register_module_module_registration_hook"]


class RemovableHandle:
    r"""A handle that removes the hook it was returned for: ``handle.remove()`` or ``with handle: ...``.

    Args:
        hooks_dict: the dict the hook lives in (held weakly).
        extra_dict: further dicts (or a list of them) keyed by the same id, cleared with it.
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extras = () if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        """Remove the hook (removing twice is harmless)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self) -> tuple:
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state: tuple) -> None:
        hooks, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks is None else hooks)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class _WeakDict(dict):
    """A plain dict that a weakref can point at (``RemovableHandle`` holds its dicts weakly)."""

    __slots__ = ("__weakref__",)


def hook_dict() -> Any:
    """A new hooks dict, keyed by handle id in registration order."""
    return _WeakDict()


def add_hook(hooks: dict, hook: Callable, prepend: bool, extra: Any = None) -> RemovableHandle:
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update((k, v) for k, v in items if k != handle.id)
    return handle


# -- global hooks (every module's call runs them, before its own) ----------------------------------
GLOBAL_FORWARD_PRE: dict = hook_dict()
GLOBAL_FORWARD: dict = hook_dict()
GLOBAL_FORWARD_ALWAYS: dict = hook_dict()
GLOBAL_BACKWARD_PRE: dict = hook_dict()
GLOBAL_BACKWARD: dict = hook_dict()
GLOBAL_BUFFER_REG: dict = hook_dict()
GLOBAL_PARAMETER_REG: dict = hook_dict()
GLOBAL_MODULE_REG: dict = hook_dict()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    r"""Register a forward pre-hook common to all modules: ``hook(module, args) -> None or new args``."""
    return add_hook(GLOBAL_FORWARD_PRE, hook, False)


def register_module_forward_hook(hook: Callable, *, always_call: bool = False) -> RemovableHandle:
    r"""Register a forward hook common to all modules: ``hook(module, args, output) -> None or new output``."""
    handle = add_hook(GLOBAL_FORWARD, hook, False, GLOBAL_FORWARD_ALWAYS)
    if always_call:
        GLOBAL_FORWARD_ALWAYS[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    r"""Register a backward pre-hook common to all modules: ``hook(module, grad_output)``."""
    return add_hook(GLOBAL_BACKWARD_PRE, hook, False)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    r"""Register a backward hook common to all modules: ``hook(module, grad_input, grad_output)``."""
    return add_hook(GLOBAL_BACKWARD, hook, False)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    r"""``hook(module, name, buffer) -> None or new buffer``, run on every ``register_buffer``."""
    return add_hook(GLOBAL_BUFFER_REG, hook, False)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    r"""``hook(module, name, param) -> None or new param``, run on every ``register_parameter``."""
    return add_hook(GLOBAL_PARAMETER_REG, hook, False)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    r"""``hook(module, name, submodule) -> None or new submodule``, run on every ``register_module``."""
    return add_hook(GLOBAL_MODULE_REG, hook, False)


# -- full backward hooks ------------------------------------------------------------------------------
def _check_grads(new: Any, old: tuple, what: str) -> tuple:
    new = (new,) if not isinstance(new, tuple) else new
    if len(new) != len(old):
        raise RuntimeError(f"Backward hook returned an invalid number of {what}, got {len(new)}, "
                           f"but expected {len(old)}")
    return new


class _BackwardHookState:
    """One call's backward-hook state: the module, its hooks and the gradient w.r.t. its outputs."""

    def __init__(self, module: Any, pre_hooks: list, hooks: list) -> None:
        self.module = module
        self.pre_hooks = pre_hooks
        self.hooks = hooks
        self.n_args = 0
        self.input_idx: list[int] = []
        self.grad_output: tuple | None = None

    def run_pre_hooks(self, grads: tuple) -> tuple:
        for hook in self.pre_hooks:
            out = hook(self.module, grads)
            if out is not None:
                grads = _check_grads(out, grads, "outputs")
        self.grad_output = grads
        return grads

    def run_hooks(self, grad_input: tuple) -> tuple:
        for hook in self.hooks:
            out = hook(self.module, grad_input, self.grad_output)
            if out is not None:
                grad_input = _check_grads(out, grad_input, "inputs")
        return grad_input


class _OutputHook(Function):
    """Identity on the module's outputs; its backward sees (and may replace) the gradient w.r.t. them."""

    @staticmethod
    def forward(ctx: Any, state: _BackwardHookState, *tensors: Tensor) -> Any:
        ctx.state = state
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state = ctx.state
        grads = state.run_pre_hooks(grads)
        if not state.input_idx:  # no input needs a gradient: the hooks run here, with grad_input all None
            state.run_hooks((None,) * state.n_args)
        return (None, *grads)


class _InputHook(Function):
    """Identity on the module's inputs that need a gradient; its backward runs the full backward hooks."""

    @staticmethod
    def forward(ctx: Any, state: _BackwardHookState, *tensors: Tensor) -> Any:
        ctx.state = state
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state = ctx.state
        full = [None] * state.n_args  # one entry per positional argument, None where it is no tensor
        for i, g in zip(state.input_idx, grads):
            full[i] = g
        full = state.run_hooks(tuple(full))
        return (None, *(full[i] for i in state.input_idx))


def setup_input_hook(state: _BackwardHookState, args: tuple) -> tuple:
    """Route the tensor inputs that need a gradient through ``_InputHook``; the others pass unchanged."""
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    state.n_args = len(args)
    state.input_idx = idx
    if not idx:
        return args
    new = _InputHook.apply(state, *(args[i] for i in idx))
    out = list(args)
    for i, t in zip(idx, new):
        out[i] = t
    return tuple(out)


def setup_output_hook(state: _BackwardHookState, result: Any) -> Any:
    """Route the module's tensor outputs through ``_OutputHook`` (a tensor or a tuple/list of them)."""
    single = isinstance(result, Tensor)
    outs = (result,) if single else tuple(result) if isinstance(result, (tuple, list)) else None
    if outs is None:
        return result
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not idx:
        return result
    new = _OutputHook.apply(state, *(outs[i] for i in idx))
    out = list(outs)
    for i, t in zip(idx, new):
        out[i] = t
    return out[0] if single else type(result)(out)

"""The ``Optimizer`` base class: parameter groups, per-parameter state, hooks, state dicts."""
from __future__ import annotations

import contextlib
import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Mapping, Sequence

import flambeau
from flambeau import Tensor

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyperparameter that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_step_post_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_next_hook_id = [0]


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: dict) -> None:
        self.hooks_dict = hooks
        self.id = _next_hook_id[0]
        _next_hook_id[0] += 1

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _add_hook(hooks: dict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a pre-hook run before ``step()`` of every optimizer: ``hook(optimizer, args, kwargs)``."""
    return _add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register a post-hook run after ``step()`` of every optimizer: ``hook(optimizer, args, kwargs)``."""
    return _add_hook(_global_step_post_hooks, hook)


def _no_grad() -> Any:
    return flambeau.no_grad()  # the grad modes are core-tensor's: there whether autograd is or not


def _enable_grad() -> Any:
    return flambeau.enable_grad()


def _update_context(optimizer: "Optimizer") -> Any:
    """Grad mode for the update: off, unless the optimizer was built with ``differentiable=True``."""
    if optimizer.defaults.get("differentiable", False):
        return contextlib.nullcontext()
    return _no_grad()


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return "flambeau.Tensor"
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"


def _wrap_step(step: Callable) -> Callable:
    """Run the step hooks around a subclass's ``step`` and note that a step happened."""

    @functools.wraps(step)
    def wrapper(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_in_step"):  # a subclass's step calling super().step(): hooks run once
            return step(self, *args, **kwargs)
        self._in_step = True
        try:
            return _hooked_step(self, step, args, kwargs)
        finally:
            self._in_step = False

    wrapper._hooked = True  # type: ignore[attr-defined]
    return wrapper


def _hooked_step(self: "Optimizer", step: Callable, args: tuple, kwargs: dict) -> Any:
    for pre_hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
        result = pre_hook(self, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(
                    f"{pre_hook} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
    out = step(self, *args, **kwargs)
    self._opt_called = True  # read by lr_scheduler's "step() before optimizer.step()" warning
    self._step_count = getattr(self, "_step_count", 0) + 1
    for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()):
        post_hook(self, args, kwargs)
    return out


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts.
            Dicts define parameter groups: ``{"params": [...], "lr": 0.1}``; options a group
            does not give are taken from ``defaults``.
        defaults (dict): the default values of the optimization options.

    A parameter may appear only once across all groups, and must be a leaf tensor.

    Example::

        >>> opt = flambeau.optim.SGD([{"params": base}, {"params": head, "lr": 1e-3}], lr=1e-2, momentum=0.9)
        >>> opt.zero_grad()
        >>> loss_fn(model(input), target).backward()
        >>> opt.step()
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _wrap_step(step)

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._opt_called = False
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        # Check every group before keeping any, so that a bad one leaves nothing half-built.
        seen: set[int] = set()
        for group in param_groups:
            self._check_param_group(group, seen)
        for group in param_groups:
            self.add_param_group(group)

    # -- parameter groups ------------------------------------------------------------------

    def _check_param_group(self, param_group: Any, seen: set[int]) -> list[Any]:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group.get("params")
        if params is None:
            raise ValueError("a parameter group must have a 'params' entry")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        param_group["params"] = params  # a generator is consumed once: keep what it gave
        tensors = []
        for item in params:
            param = item[1] if isinstance(item, tuple) and len(item) == 2 else item
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(param)}")
            leaf = param.is_leaf or getattr(param, "retains_grad", False)
            if not self.defaults.get("differentiable", False) and not leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            tensors.append(param)
        ids = [id(p) for p in tensors]
        if len(set(ids)) != len(ids):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if not existing.isdisjoint(ids) or not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
        self._check_group_options(param_group)
        seen.update(ids)
        return params

    def _check_group_options(self, param_group: dict[str, Any]) -> None:
        """Options a group overrides are checked like the constructor's (negative lr...)."""
        lr = param_group.get("lr")
        if lr is not None and not isinstance(lr, Tensor) and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        r"""Add a parameter group to the optimizer's ``param_groups``.

        Useful when fine-tuning: frozen layers can be made trainable and added as training goes.

        Args:
            param_group (dict): the parameters to optimize (``"params"``) and options for this group.
        """
        params = self._check_param_group(param_group, set())
        if params and isinstance(params[0], tuple):
            param_group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    # -- gradients and steps ---------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Reset the gradients of all optimized tensors.

        Args:
            set_to_none (bool): set the grads to ``None`` instead of filling them with zeros
                (less memory, and a later ``step`` skips parameters without a grad).
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        r"""Perform one optimization step (update the parameters).

        Args:
            closure (Callable, optional): re-evaluates the model and returns the loss; needed by
                some algorithms (LBFGS).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @staticmethod
    def _eval_closure(closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with _enable_grad():
            return closure()

    @staticmethod
    def _init_state(state: dict[Any, Any], p: Tensor, group: dict[str, Any],
                    init: Mapping[str, Callable[[Tensor, dict[str, Any]], Any]]) -> None:
        """Fill ``state`` with ``init[name](p, group)`` for each name, in ``init``'s order."""
        for name, make in init.items():
            state[name] = make(p, group)

    def _group_tensors(self, group: dict[str, Any], keys: Sequence[str | None],
                       init: Mapping[str, Callable[[Tensor, dict[str, Any]], Any]] | None = None,
                       ) -> tuple[list[Any], ...]:
        r"""Gather one group's parameters that have a gradient, for a functional update.

        Args:
            group (dict): the parameter group.
            keys (sequence of str or None): the state entries to return, one list per key in this
                order; ``None`` stands for a disabled optional buffer and gives an empty list.
            init (mapping, optional): ``name -> callable(p, group)`` building a parameter's state
                when it is empty, in this (creation, hence ``state_dict``) order; ``None`` when the
                state is built elsewhere (at construction).

        Returns:
            ``(params, grads, *state_lists)`` with one state list per entry of ``keys``.
        """
        params: list[Tensor] = []
        grads: list[Tensor] = []
        lists: list[list[Any]] = [[] for _ in keys]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if init is not None and len(state) == 0:
                self._init_state(state, p, group, init)
            params.append(p)
            grads.append(p.grad)
            for key, values in zip(keys, lists):
                if key is not None:
                    values.append(state[key])
        return (params, grads, *lists)

    # -- hooks -----------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register a hook ``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` run before ``step``."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register a hook ``hook(optimizer, args, kwargs) -> None`` run after ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer) -> None`` run before ``state_dict`` builds its result."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer, state_dict) -> state_dict or None`` run after ``state_dict``."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer, state_dict) -> state_dict or None`` run before loading."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer) -> None`` run after ``load_state_dict``."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        r"""The optimizer's state as a dict, in PyTorch's layout.

        ``state`` maps each parameter's integer index (its position across all groups) to its
        state; ``param_groups`` lists each group's options with ``params`` as those indices.
        Tensors in the result are the optimizer's own (not copies), as in PyTorch.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    #: State entries that are scalars of their own dtype (float32, whatever the parameter's), kept
    #: as saved by ``load_state_dict``: cast to a float64 parameter's dtype, the next update would
    #: round them differently from the run that saved them, and a resumed run would drift from an
    #: uninterrupted one. PyTorch keeps only ``step``; subclasses add theirs (ASGD's ``eta``...).
    _scalar_state: frozenset[str] = frozenset({"step"})

    def _cast_state(self, param: Tensor, value: Any, key: Any = None) -> Any:
        """A loaded state value, moved to the parameter's device (and dtype, for float state)."""
        if isinstance(value, Tensor):
            if key in self._scalar_state:
                return value  # scalar state keeps its dtype whatever the parameter's
            if param.is_floating_point() and value.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: self._cast_state(param, v, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._cast_state(param, v, key) for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        r"""Load the optimizer state (a result of :meth:`state_dict`).

        The groups must match this optimizer's: as many groups, with as many parameters each.
        A mismatch raises ValueError and leaves the optimizer unchanged.

        Args:
            state_dict (dict): optimizer state; should be an object returned from a call to :meth:`state_dict`.
        """
        state_dict = dict(state_dict)
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("loaded state dict must have the keys 'state' and 'param_groups'")
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        for key, value in state_dict["state"].items():
            param = id_map.get(key)
            if param is None:
                continue
            for name, item in (value.items() if isinstance(value, dict) else ()):
                if isinstance(item, Tensor) and name != "step" and item.dim() > 0 \
                        and tuple(item.shape) != tuple(param.shape) and self._state_shape_must_match(name):
                    raise ValueError(f"loaded state dict has a state '{name}' of shape {list(item.shape)} for a "
                                     f"parameter of shape {list(param.shape)}")
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = self._cast_state(param, value)
            else:
                state[key] = value

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def _state_shape_must_match(self, name: str) -> bool:
        """Whether state ``name`` has the parameter's shape (Adafactor's factored moments do not)."""
        return True

    # -- pickling, printing ----------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for attr in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if attr not in self.__dict__:
                setattr(self, attr, OrderedDict())
        # Groups saved by an older version may lack newer options: fill them from the defaults.
        for group in self.param_groups:
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        text += ")"
        return text


def _params_with_grad(group: dict[str, Any]) -> list[Tensor]:
    return [p for p in group["params"] if p.grad is not None]


def _float_scalar(value: float = 0.0) -> Tensor:
    """A step counter: a float32 0-d tensor, as PyTorch keeps it."""
    return flambeau.tensor(float(value), dtype=flambeau.float32)


def _init_step(p: Tensor, group: dict[str, Any]) -> Tensor:
    """``init`` entry for :meth:`Optimizer._group_tensors`: a zero step counter."""
    return _float_scalar()


def _init_zeros(p: Tensor, group: dict[str, Any]) -> Tensor:
    """``init`` entry for :meth:`Optimizer._group_tensors`: a zero buffer shaped like ``p``."""
    return flambeau.zeros_like(p)


def _value(x: Any) -> float:
    return x.item() if isinstance(x, Tensor) else x


def _check_foreach_fused(foreach: bool | None, fused: bool | None, differentiable: bool) -> None:
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if (fused or foreach) and differentiable:
        raise RuntimeError("`foreach` and `fused` do not support `differentiable=True`")

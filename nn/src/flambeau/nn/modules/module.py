"""``Module``: the base class of every layer (torch.nn.Module's API).

A module keeps its parameters, buffers and submodules in three ordered dicts, filled by attribute
assignment (``self.weight = Parameter(...)``, ``self.fc = Linear(...)``) or the ``register_*`` methods;
every traversal (``parameters``, ``state_dict``, ``to``, ...) walks them.
"""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

import flambeau
from flambeau import Tensor

from ..parameter import Buffer, Parameter, is_lazy
from . import _hooks
from ._hooks import GLOBAL_BACKWARD, GLOBAL_BACKWARD_PRE, GLOBAL_FORWARD, GLOBAL_FORWARD_PRE
from ._hooks import RemovableHandle, add_hook, hook_dict

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the model has that the state dict lacked, and the reverse."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first by ``spaces`` (nested modules' repr)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


#: While ``load_state_dict`` checks a state dict, the copies that ``_load_from_state_dict`` plans land
#: here instead of running, so that nothing changes until every check has passed.
_LOAD_PLAN = threading.local()


def _forward_unimplemented(self: "Module", *input: Any) -> None:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    r"""Base class for all neural network modules.

    Subclass it, create the layers and parameters in ``__init__`` (after ``super().__init__()``) and
    write the computation in ``forward``; call the module (``model(x)``), not ``forward``, so that its
    hooks run.

    Example::

        >>> class Model(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and (args or kwargs):
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                                f"'{next(iter(kwargs))}'")
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", hook_dict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", hook_dict())
        setattr_(self, "_forward_hooks", hook_dict())
        setattr_(self, "_forward_hooks_with_kwargs", hook_dict())
        setattr_(self, "_forward_hooks_always_called", hook_dict())
        setattr_(self, "_backward_pre_hooks", hook_dict())
        setattr_(self, "_backward_hooks", hook_dict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_state_dict_hooks", hook_dict())
        setattr_(self, "_state_dict_pre_hooks", hook_dict())
        setattr_(self, "_load_state_dict_pre_hooks", hook_dict())
        setattr_(self, "_load_state_dict_post_hooks", hook_dict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # -- registration ----------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        r"""Add a buffer: a tensor that is module state but no parameter (running statistics, ...).

        Args:
            name (str): the buffer's attribute name.
            tensor (Tensor or None): the buffer (``None``: declared, left out of the ``state_dict``).
            persistent (bool): whether it is part of the module's ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = _plain(tensor)
        for hook in _hooks.GLOBAL_BUFFER_REG.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        r"""Add a parameter, reachable as attribute ``name``.

        Args:
            name (str): the parameter's attribute name.
            param (Parameter or None): the parameter (``None``: declared, left out of ``parameters()``).
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                                "(torch.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                    f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                    "the forward() method.")
        for hook in _hooks.GLOBAL_PARAMETER_REG.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        r"""Add a child module, reachable as attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _hooks.GLOBAL_MODULE_REG.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name: str, module: "Module | None") -> None:
        r"""Alias of :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        r"""The submodule at dotted path ``target`` (``""``: this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        r"""Set the submodule at dotted path ``target`` (its parent must exist)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        r"""The parameter at dotted path ``target`` (``"fc.weight"``)."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        r"""The buffer at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self) -> Any:
        r"""Extra state for the ``state_dict`` (override with :meth:`set_extra_state`)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        r"""Restore what :meth:`get_extra_state` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # -- attribute protocol ------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*dicts: Any) -> None:
            for dd in dicts:
                if name in dd:
                    if isinstance(dd, set):
                        dd.discard(name)
                    else:
                        del dd[name]

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            self.add_module(name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self.add_module(name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if isinstance(value, Buffer):
                persistent = value.persistent
                remove_from(d, self._parameters, self._modules)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = dir(self.__class__) + list(self.__dict__)
        keys = attrs + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # Modules pickled before a field existed get its default.
        defaults = {"_forward_pre_hooks_with_kwargs": hook_dict, "_forward_hooks_with_kwargs": hook_dict,
                    "_forward_hooks_always_called": hook_dict, "_backward_pre_hooks": hook_dict,
                    "_state_dict_pre_hooks": hook_dict, "_load_state_dict_post_hooks": hook_dict,
                    "_non_persistent_buffers_set": set}
        for key, make in defaults.items():
            if key not in self.__dict__:
                self.__dict__[key] = make()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    # -- traversal ------------------------------------------------------------------------------------
    def _named_members(self, get_members: Callable[["Module"], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        r"""The module's parameters (each shared one once); with ``recurse``, its submodules' too."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        r"""``(dotted name, parameter)`` pairs; ``remove_duplicate=False`` yields a shared one each time."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        r"""The module's buffers; with ``recurse``, its submodules' too."""
        for _name, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        r"""``(dotted name, buffer)`` pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self) -> Iterator["Module"]:
        r"""The immediate submodules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        r"""``(name, submodule)`` pairs of the immediate submodules (each module once)."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self) -> Iterator["Module"]:
        r"""This module and every submodule, depth first (each once)."""
        for _name, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        r"""``(dotted name, module)`` pairs of this module (name ``prefix``) and every submodule."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # -- modes and gradients ----------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        r"""Set training mode (``mode=True``) or evaluation mode, here and in every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        r"""Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        r"""Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Reset every parameter's gradient: to ``None`` (default), or to zeros."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        r"""Call ``fn`` on every submodule (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def share_memory(self) -> "Module":
        r"""Move the parameters, buffers and gradients to shared memory (:meth:`Tensor.share_memory_`).

        Processes that receive the module through :mod:`flambeau.multiprocessing` then update the
        same tensors (Hogwild-style training). Returns self.
        """
        return self._apply(lambda t: t.share_memory_())

    # -- conversions -------------------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Replace every parameter's and buffer's data by ``fn`` of it (gradients too), in place."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with flambeau.no_grad():
                new = fn(param)
            if new is not param:
                # Same parameter object, new data: optimizers and shared references stay valid.
                param.data = new
            if param.grad is not None:
                with flambeau.no_grad():
                    new_grad = fn(param.grad)
                if new_grad is not param.grad:
                    param._grad = new_grad.detach().requires_grad_(param.grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        r"""Move and/or cast the parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``. Only floating-point (and complex) tensors take the ``dtype``.
        """
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            if t.is_floating_point() or t.is_complex():
                want = dtype
                if want is not None and t.is_complex() and not want.is_complex:
                    want = None  # as PyTorch: a real dtype leaves complex tensors' dtype alone
                return t.to(device=device, dtype=want)
            return t.to(device=device)

        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        r"""Move the parameters and buffers to ``device`` without copying their values (uninitialised)."""
        return self._apply(lambda t: flambeau.empty_like(t, device=device), recurse=recurse)

    def cpu(self) -> "Module":
        r"""Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> "Module":
        r"""Move every parameter and buffer to a CUDA device."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type: Any) -> "Module":
        r"""Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        r"""Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        r"""Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        r"""Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        r"""Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- hooks ----------------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        r"""Register ``hook(module, args) -> None or new args`` (``with_kwargs``:
        ``hook(module, args, kwargs) -> None or (new args, new kwargs)``), run before ``forward``."""
        handle = add_hook(self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        r"""Register ``hook(module, args, output) -> None or new output`` (``with_kwargs``:
        ``hook(module, args, kwargs, output)``), run after ``forward`` (``always_call``: even if it raised)."""
        handle = add_hook(self._forward_hooks, hook, prepend,
                          [self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(module, grad_output) -> None or new grad_output``, run when the gradient
        w.r.t. the module's outputs has been computed."""
        self._is_full_backward_hook = True
        return add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(module, grad_input, grad_output) -> None or new grad_input``, run when the
        gradient w.r.t. the module's positional inputs has been computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        r"""Deprecated: use :meth:`register_full_backward_hook` (this registers one)."""
        import warnings

        warnings.warn("register_backward_hook is deprecated: it registers a full backward hook here; use "
                      "register_full_backward_hook", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register ``hook(module, prefix, keep_vars)``, run before ``state_dict`` collects this module."""
        return add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register ``hook(module, state_dict, prefix, local_metadata) -> None or new state_dict``."""
        return add_hook(self._state_dict_hooks, hook, False)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)``, run before this module reads its entries (it may edit them)."""
        return add_hook(self._load_state_dict_pre_hooks, functools.partial(_drop_module, hook), False)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        return add_hook(self._load_state_dict_pre_hooks,
                        functools.partial(_keep_module, hook) if with_module else
                        functools.partial(_drop_module, hook), False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        r"""Register ``hook(module, incompatible_keys)``, run after ``load_state_dict`` has loaded; it may
        clear the keys of ``incompatible_keys`` (before a strict load raises)."""
        return add_hook(self._load_state_dict_post_hooks, hook, False)

    # -- calling --------------------------------------------------------------------------------------------
    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        # the common call has no hook at all: straight to forward (module globals, not _hooks.X: cheaper)
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or GLOBAL_FORWARD_PRE or GLOBAL_FORWARD
                or GLOBAL_BACKWARD or GLOBAL_BACKWARD_PRE):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    __call__ = _call_impl

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook_id, hook in (*_hooks.GLOBAL_FORWARD_PRE.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {out}.")
                    args, kwargs = out
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        backward_hooks = [*_hooks.GLOBAL_BACKWARD.values(), *self._backward_hooks.values()]
        backward_pre = [*_hooks.GLOBAL_BACKWARD_PRE.values(), *self._backward_pre_hooks.values()]
        state = None
        if (backward_hooks or backward_pre) and flambeau.is_grad_enabled():
            state = _hooks._BackwardHookState(self, backward_pre, backward_hooks)
            args = _hooks.setup_input_hook(state, args)
        forward_hooks = [*((k, h, k in _hooks.GLOBAL_FORWARD_ALWAYS, False) for k, h in
                           _hooks.GLOBAL_FORWARD.items()),
                         *((k, h, k in self._forward_hooks_always_called, k in self._forward_hooks_with_kwargs)
                           for k, h in self._forward_hooks.items())]
        try:
            result = self.forward(*args, **kwargs)
        except BaseException:
            for _k, hook, always, with_kwargs in forward_hooks:
                if always:
                    try:
                        hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
                    except Exception:
                        pass  # the forward's own exception is the one to report
            raise
        for _k, hook, _always, with_kwargs in forward_hooks:
            out = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
            if out is not None:
                result = out
        if state is not None:
            result = _hooks.setup_output_hook(state, result)
        return result

    # -- state dict ------------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        r"""A dict of the module's whole state: parameters and persistent buffers, by dotted name.

        Args:
            destination (dict, optional): fill this mapping instead of a new ``OrderedDict``.
            prefix (str): prepended to every key.
            keep_vars (bool): keep the tensors themselves (attached to autograd) instead of detached ones.
        """
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            names = ("destination", "prefix", "keep_vars")
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 3 positional arguments but {len(args)} were given")
            values = dict(zip(names, args))
            destination = values.get("destination", destination)
            prefix = values.get("prefix", prefix)
            keep_vars = values.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            out = hook(self, destination, prefix, local_metadata)
            if out is not None:
                destination = out
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """Check this module's own entries of ``state_dict`` and copy them in (the copies wait for every
        check of the whole model to pass when ``load_state_dict`` drives this)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        plan = getattr(_LOAD_PLAN, "ops", None)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if not is_lazy(param) and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            op = functools.partial(self._load_one, name, param, value, assign)
            if plan is not None:
                plan.append(op)
            else:
                op()
        extra_key = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_key in state_dict:
                op = functools.partial(self.set_extra_state, state_dict[extra_key])
                if plan is not None:
                    plan.append(op)
                else:
                    op()
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local_state:
                        unexpected_keys.append(key)

    def _load_one(self, name: str, param: Tensor, value: Tensor, assign: bool) -> None:
        with flambeau.no_grad():
            if is_lazy(param):
                param.materialize(value.shape, device=param.device, dtype=param.dtype)
            if assign:
                if name in self._parameters:
                    new = value if isinstance(value, Parameter) else Parameter(value, param.requires_grad)
                    self._parameters[name] = new
                else:
                    self._buffers[name] = value
            else:
                param.copy_(value)
        finish = getattr(self, "_maybe_finish", None)  # a lazy module whose last placeholder got its shape
        if finish is not None:
            finish()

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        r"""Copy parameters and buffers from ``state_dict`` into this module and its submodules.

        Every entry is checked before anything is copied: on any error (missing or unexpected keys when
        ``strict``, a shape mismatch, a non-tensor value) the model is left unchanged and a
        ``RuntimeError`` lists every problem.

        Args:
            state_dict (dict): parameters and persistent buffers by dotted name.
            strict (bool): whether the keys must match this module's ``state_dict()`` keys exactly.
            assign (bool): use the state dict's tensors themselves instead of copying into the existing ones.

        Returns:
            ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local_state: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)

        outer = getattr(_LOAD_PLAN, "ops", None)  # a load_state_dict inside a hook of another one
        _LOAD_PLAN.ops = plan = []
        try:
            load(self, state_dict)
        finally:
            _LOAD_PLAN.ops = outer
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        for op in plan:
            op()
        result = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in self.modules():
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)
        return result

    # -- repr --------------------------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        r"""The module's own description inside its repr's parentheses (override it); empty by default."""
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def _replicate_for_data_parallel(self) -> "Module":
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        return replica


def _drop_module(hook: Callable, module: Module, *args: Any) -> Any:
    return hook(*args)


def _keep_module(hook: Callable, module: Module, *args: Any) -> Any:
    return hook(module, *args)


def _plain(buf: Tensor) -> Tensor:
    """A ``Buffer`` as the plain tensor a module stores (same storage, same requires_grad)."""
    out = buf.detach()
    if buf.requires_grad:
        out.requires_grad_(True)
    return out


def _parse_to(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
    """``Module.to``'s arguments as (device, dtype, non_blocking), each None when not given."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    kwargs.pop("memory_format", None)
    tensor = kwargs.pop("tensor", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: unexpected {sorted(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        tensor = rest.pop(0)
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    for a in rest:
        if isinstance(a, flambeau.dtype):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, (str, flambeau.device, int)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if device is not None and not isinstance(device, flambeau.device):
        device = flambeau.device(device)
    return device, dtype, non_blocking


# torch.nn.modules.module's global hook functions live here too.
from ._hooks import (register_module_buffer_registration_hook, register_module_forward_hook,  # noqa: E402,F401
                     register_module_forward_pre_hook, register_module_full_backward_hook,
                     register_module_full_backward_pre_hook, register_module_module_registration_hook,
                     register_module_parameter_registration_hook)

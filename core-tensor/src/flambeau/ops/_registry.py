"""The op registry: declarations, gradients, and one frozen kernel table per backend.

Everything here is filled at load time (``flambeau.plugins.load``) and then only read.
Backends other than the default are loaded on first use of their device type, through
``TABLES.__missing__``; after that a kernel lookup is one dict access.
"""
from __future__ import annotations

import inspect
import warnings
from types import FunctionType
from typing import Any, Callable

from ._decl import OpDecl

OPS: dict[str, OpDecl] = {}
GRADIENTS: dict[str, Callable[..., Any]] = {}
#: Kernels registered through the pluggy hook, by backend then op, until that backend loads.
HOOK_KERNELS: dict[str, dict[str, Callable[..., Any]]] = {}
#: Who registered each hook kernel and each gradient (a distribution name), for messages and the report.
HOOK_KERNEL_PROVIDERS: dict[tuple[str, str], str] = {}
GRADIENT_PROVIDERS: dict[str, str] = {}
#: The generated public function of every op (and of every in-place form), by name.
FUNCTIONS: dict[str, Callable[..., Any]] = {}

#: The plugin loader (``flambeau.plugins._loader``: ``load_backend``, ``backend_distribution``,
#: ``backend_records``, ``plugin_records``). It stands above the registry, since loading a backend runs plugin code
#: that uses the whole core; ``flambeau._late_bindings`` binds it before any plugin loads.
LOADER: Any = None


def backend_distribution(device_type: str) -> str:
    """The distribution (and version) that provides, or would provide, a device type, for messages."""
    return LOADER.backend_distribution(device_type)


def backend_records() -> dict[str, Any]:
    """The plugin records of the discovered backends, by device type (loaded or not)."""
    return LOADER.backend_records


class KernelTable(dict):
    """One backend's ops: op name -> kernel. Frozen once built (no writes after load).

    A dict subclass that overrides only the writers, so that a lookup stays a plain dict access.
    """

    def __init__(self, backend: Any, kernels: dict[str, Callable[..., Any]]):
        super().__init__(kernels)
        self.backend = backend
        # bound once: the allocator on the hot path; a backend that declares only some dtypes
        # gets one that refuses the others (a backend with all of them pays nothing)
        self.empty = backend.empty if _declares_all_dtypes(backend) else _checked_allocator(backend)
        #: op name -> why its kernel was refused at load
        self.refused: dict[str, str] = {}

    def _frozen(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("kernel tables are frozen after load")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _frozen  # type: ignore[assignment]


def _declares_all_dtypes(backend: Any) -> bool:
    from .._dtypes import ALL_DTYPES

    return all(d in backend.dtypes for d in ALL_DTYPES)


def unsupported_dtype_error(backend: Any, dtype: Any) -> TypeError:
    """The error for a tensor of ``dtype`` on a backend that does not declare it."""
    declared = ", ".join(sorted(d.name for d in backend.dtypes))
    return TypeError(f"the '{backend.name}' backend ({backend_distribution(backend.name)}) does not support "
                     f"{dtype}: a tensor of that dtype cannot be created on or moved to it (it supports: {declared})")


def check_dtype(backend: Any, dtype: Any) -> None:
    """Raise :func:`unsupported_dtype_error` unless ``backend`` declares ``dtype``."""
    if dtype not in backend.dtypes:
        raise unsupported_dtype_error(backend, dtype)


def _checked_allocator(backend: Any) -> Callable[..., Any]:
    empty, dtypes = backend.empty, backend.dtypes

    def checked_empty(shape: tuple, dtype: Any, device: Any) -> Any:
        if dtype not in dtypes:
            raise unsupported_dtype_error(backend, dtype)
        return empty(shape, dtype, device)

    return checked_empty


class _Tables(dict):
    """device type -> KernelTable; a missing type loads its backend (the lazy-loading point)."""

    def __missing__(self, device_type: str) -> KernelTable:
        table = LOADER.load_backend(device_type)
        dict.__setitem__(self, device_type, table)
        return table


TABLES = _Tables()


_CO_VARARGS, _CO_VARKEYWORDS = inspect.CO_VARARGS, inspect.CO_VARKEYWORDS


def code_parameters(fn: Callable[..., Any]) -> tuple[list[str], bool, bool, bool] | None:
    """``(names, *args?, **kwargs?, plain)`` of a Python function's parameters, read from its code
    object as ``inspect.signature`` would give them (``__wrapped__`` followed): ``names`` without
    the ``*args``/``**kwargs`` ones; ``plain`` when all are positional-or-keyword without defaults.
    None for anything else (a builtin, a partial, a ``__signature__``): ask ``inspect.signature``.
    ~1 µs rather than ~25: ~480 kernels are checked or wrapped when the CPU backend loads."""
    if type(fn) is not FunctionType:  # methods, partials, classes...: inspect's own rules
        return None
    while True:
        if "__signature__" in getattr(fn, "__dict__", ()):
            return None
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is None:
            break
        fn = wrapped
    if type(fn) is not FunctionType:
        return None
    code = fn.__code__
    n = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:n])
    varargs, varkw = bool(code.co_flags & _CO_VARARGS), bool(code.co_flags & _CO_VARKEYWORDS)
    plain = not (varargs or varkw or code.co_kwonlyargcount or code.co_posonlyargcount or fn.__defaults__)
    return names, varargs, varkw, plain


def kernel_mismatch(decl: OpDecl, kernel: Callable[..., Any]) -> str | None:
    """Why a kernel's parameters do not fit its op's declaration; None when they do."""
    fast = code_parameters(kernel)
    if fast is not None:
        all_names, varargs, varkw, _ = fast
    else:
        try:
            sig = inspect.signature(kernel)
        except (TypeError, ValueError):  # a builtin without a signature: nothing to check
            return None
        params = list(sig.parameters.values())
        all_names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        varkw = any(p.kind is p.VAR_KEYWORD for p in params)
    if varargs:
        return None  # a generic kernel (*args) fits any op
    names = [name for name in all_names if name != "out"]
    if names != decl.param_names:
        return f"its parameters are ({', '.join(names)}) but the op declares ({', '.join(decl.param_names)})"
    takes_out = "out" in all_names or varkw
    if decl.returns_out and not takes_out:
        return "it must take the keyword argument 'out' (a compute op's preallocated output)"
    return None


def build_table(backend: Any, own_kernels: dict[str, Callable[..., Any]], distribution: str = "?") -> KernelTable:
    """Freeze a backend's kernels (its own, then those of plugins, which take precedence) into one flat table.

    A kernel for an op that no installed package declares is dropped; one whose parameters do
    not match its op's declaration is refused with a warning and listed in ``table.refused``.
    """
    from ..plugins._discovery import PluginWarning, user_stacklevel

    merged = {name: (kernel, distribution) for name, kernel in own_kernels.items()}
    for name, kernel in HOOK_KERNELS.get(backend.name, {}).items():
        merged[name] = (kernel, HOOK_KERNEL_PROVIDERS.get((backend.name, name), "?"))
    accepted: dict[str, Callable[..., Any]] = {}
    refused: dict[str, str] = {}
    for name, (kernel, provider) in merged.items():
        decl = OPS.get(name)
        if decl is None:
            continue  # a kernel for an op no installed package declares: unused
        reason = kernel_mismatch(decl, kernel)
        if reason:
            refused[name] = f"{reason} (kernel from {provider})"
            warnings.warn(f"flambeau: backend {backend.name!r}: the kernel for {name!r} from {provider} is refused: "
                          f"{reason}", PluginWarning, stacklevel=user_stacklevel())
            continue
        accepted[name] = kernel
    from . import _checks

    if _checks.enabled():  # FLAMBEAU_CHECK_KERNELS: checking wrappers, read once here (none otherwise)
        accepted = _checks.wrap_kernels(backend, accepted, OPS, TABLES)
        table = KernelTable(backend, accepted)
        table.empty = _checks.checked_allocator(backend, table.empty)
        _checks.check_declared_dtypes(backend, _device_for(backend))
    else:
        table = KernelTable(backend, accepted)
    table.refused = refused
    return table


def _device_for(backend: Any) -> Any:
    """The device a backend's tensors go to when given none (its default index)."""
    from .._device import device

    index = backend.default_index()
    return device(backend.name) if index is None else device(backend.name, index)

"""Loading: plugins at ``import flambeau``, backends on first use of their device type.

Loading happens once, after core-tensor has finished importing, and is not re-entrant.
It calls every hook, then freezes the registry; nothing here runs per op.
"""
from __future__ import annotations

import os
import re
import threading
import warnings
from typing import Any

import pluggy

from ..ops import _codegen, _dispatch
from ..ops._decl import OpDecl
from ..ops._registry import (FUNCTIONS, GRADIENT_PROVIDERS, GRADIENTS, HOOK_KERNEL_PROVIDERS, HOOK_KERNELS, OPS,
                             build_table)
from . import _discovery, _isolation
from ._backend import Backend
from ._hookspecs import PROJECT, FlambeauSpec

_lock = threading.RLock()
_state: dict[str, Any] = {"loaded": False, "loading": False}
plugin_records: list[_discovery.PluginRecord] = []
backend_records: dict[str, _discovery.PluginRecord] = {}  # device type -> the entry point providing it
#: every flambeau.backends entry point, including those refused for a device type taken by another
all_backend_records: list[_discovery.PluginRecord] = []
BACKENDS: dict[str, Backend] = {}

#: Device types a first-party distribution provides, for "install X" messages.
KNOWN_BACKEND_DISTRIBUTIONS = {"cpu": "flambeau-backend-cpu", "cuda": "flambeau-backend-cuda",
                               "meta": "flambeau-backend-meta"}


def plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(FlambeauSpec)
    return pm


def load() -> None:
    """Discover and load every plugin, then freeze the registry; called once by ``import flambeau``.

    Not re-entrant: a plugin that calls it (or uses a backend) while being loaded gets a
    RuntimeError, which fails that plugin and nothing else.
    """
    with _lock:
        if _state["loaded"]:
            return
        if _state["loading"]:
            raise RuntimeError(
                "flambeau is loading its plugins and loading is not re-entrant: a plugin's import-time code "
                "called flambeau.plugins load() or used a device; defer that work until after `import flambeau`"
            )
        with _isolation.watching_sigint():  # a real Ctrl-C still interrupts; a plugin's own does not
            _state["loading"] = True
            try:
                engine = _load()
            finally:
                _state["loading"] = False
            _state["loaded"] = True
            # The kernel tables may be built from here on: every hook has been called.
            if engine is not None:
                _install_engine(*engine)
            if "cpu" in backend_records:  # the default device's backend loads now; others on first use
                try:
                    _dispatch.TABLES["cpu"]
                except BackendUnavailable:
                    pass  # recorded and warned; using the device raises with the cause chained


class _Contribution:
    """Everything one plugin's hooks returned, checked before any of it enters the registry."""

    def __init__(self) -> None:
        self.ops: list[OpDecl] = []
        self.functions: dict[str, Any] = {}
        self.kernels: dict[tuple[str, str], Any] = {}
        self.gradients: dict[str, Any] = {}
        self.engine: Any = None


def _load() -> tuple[Any, _discovery.PluginRecord] | None:
    from .._core_ops import plugin as core_plugin

    pm = plugin_manager()
    core_record = _discovery.PluginRecord("core", _discovery.PLUGIN_GROUP, "flambeau._core_ops.plugin",
                                          _discovery.CORE_DISTRIBUTION, _discovery.core_version(), "loaded")
    plugins, backends = _discovery.scan()
    plugin_records[:] = [core_record, *plugins]
    _record_backends(backends)
    engine: tuple[Any, _discovery.PluginRecord] | None = None
    # Core first, then the others in a fixed order: the first to declare an op keeps it.
    for record, module in [(core_record, core_plugin), *_import_plugins(plugins)]:
        contribution = _contribution(pm, record, module)
        if contribution is None:
            continue
        _commit(record, contribution)
        record.status = "loaded"
        if contribution.engine is not None:
            if engine is None:
                engine = (contribution.engine, record)
            else:
                warnings.warn(f"flambeau: plugin {record.name!r} from {record.distribution} offers an autograd engine; "
                              f"keeping the one from {engine[1].distribution}", _discovery.PluginWarning,
                              stacklevel=_discovery.user_stacklevel())
    return engine


def _record_backends(backends: list[_discovery.PluginRecord]) -> None:
    all_backend_records[:] = backends
    backend_records.clear()
    unsettled.clear()
    names = dict.fromkeys(r.name for r in backends)
    for name in names:
        _settle(name, warn=True)


#: device type -> the entry points that claim it when none of them was given it (the user chooses)
unsettled: dict[str, list[_discovery.PluginRecord]] = {}
#: device type -> the distribution the user chose with choose_backend (normalised)
_chosen: dict[str, str] = {}
#: why a claimant lost its device type, set by _settle (the rest of a record's failures are its own)
_LOST = "lost"


def choice_variable(device_type: str) -> str:
    """The environment variable that chooses which distribution provides ``device_type``."""
    return "FLAMBEAU_BACKEND_" + re.sub(r"[^A-Za-z0-9]", "_", device_type).upper()


def _choice(device_type: str) -> tuple[str, str] | None:
    """``(normalised distribution, where the choice was made)``, or None when the user made none."""
    if device_type in _chosen:
        return _chosen[device_type], "flambeau.plugins.choose_backend"
    var = choice_variable(device_type)
    value = os.environ.get(var, "").strip()
    return (_discovery._normalize(value), var) if value else None


def _settle(name: str, warn: bool) -> None:
    """Give the device type ``name`` to one of the entry points that claim it, or to none.

    Only claimants still able to load compete (a disabled one, or one refused from its
    metadata, claims nothing). The user's choice wins; else a name reserved to one of
    flambeau's own distributions goes to it alone; else a single claimant gets it; several
    claimants get nothing until the user chooses, and the warning names them all.
    """
    claimants = [r for r in all_backend_records if r.name == name
                 and (r.status == "not loaded" or getattr(r, "_lost", False))]
    for r in claimants:  # settled again (choose_backend): start from what the metadata said
        if getattr(r, "_lost", False):
            r.status, r.reason, r.error, r._lost = "not loaded", "", None, False  # type: ignore[attr-defined]
    backend_records.pop(name, None)
    unsettled.pop(name, None)
    if not claimants:
        # Only disabled or refused entry points: the first one is kept, so that using the device
        # says why (disabled, or its failure) rather than that nothing provides it.
        others = [r for r in all_backend_records if r.name == name]
        if others:
            backend_records[name] = others[0]
        return
    how = (f"set {choice_variable(name)}=<distribution> or call flambeau.plugins.choose_backend({name!r}, "
           "<distribution>) before using the device")
    choice = _choice(name)
    reserved = KNOWN_BACKEND_DISTRIBUTIONS.get(name)
    if choice is not None:
        dist, where = choice
        owner = next((r for r in claimants if _discovery._normalize(r.distribution) == dist), None)
        why = (f"{where} chooses {dist} for the device type {name!r}" if owner is not None else
               f"{where} chooses {dist} for the device type {name!r}, which does not provide it (claimed by "
               + ", ".join(r.distribution for r in claimants) + ")")
    elif reserved is not None:
        owner = next((r for r in claimants if _discovery._normalize(r.distribution) == reserved), None)
        why = (f"the device type {name!r} is reserved to flambeau's own {reserved}; to use this backend "
               f"instead, set {choice_variable(name)}=<its distribution>")
    elif len(claimants) == 1:
        owner, why = claimants[0], ""
    else:
        owner = None
        why = (f"the device type {name!r} is claimed by " + " and ".join(
            f"{r.distribution} {r.version}" for r in claimants) + f", so neither gets it; {how}")
    if owner is not None:
        backend_records[name] = owner
    else:
        unsettled[name] = claimants
    losers = [r for r in claimants if r is not owner]
    for i, r in enumerate(losers):
        # One warning for a name no one got (it names every claimant), one per refused claimant otherwise.
        r.fail(why, warn=warn and (owner is not None or i == 0))
        r._lost = True  # type: ignore[attr-defined]


def choose_backend(device_type: str, distribution: str) -> None:
    """Give ``device_type`` to ``distribution`` when several installed distributions claim it.

    The same as setting ``FLAMBEAU_BACKEND_<DEVICE_TYPE>=distribution`` (the device type upper-cased,
    other characters than letters and digits as ``_``) before ``import flambeau``. It must be called
    before the device type is first used; it overrides the reservation of ``cpu``, ``cuda`` and
    ``meta`` to flambeau's own backends.

    Args:
        device_type: the device type name, e.g. ``"npu"``.
        distribution: the distribution that provides it, compared as PEP 503 normalises names.

    Example::

        >>> flambeau.plugins.choose_backend("npu", "acme-flambeau-npu")
    """
    if not isinstance(device_type, str) or not isinstance(distribution, str):
        raise TypeError("choose_backend(): device_type and distribution must be str")
    with _lock:
        if dict.get(_dispatch.TABLES, device_type) is not None:
            raise RuntimeError(f"choose_backend(): the '{device_type}' device is already in use (its backend from "
                               f"{backend_records[device_type].distribution} is loaded); choose before first use, "
                               f"or set {choice_variable(device_type)} before `import flambeau`")
        if not any(r.name == device_type for r in all_backend_records):
            raise ValueError(f"choose_backend(): no installed distribution provides the device type '{device_type}'")
        _chosen[device_type] = _discovery._normalize(distribution)
        _settle(device_type, warn=False)


def _import_plugins(plugins: list[_discovery.PluginRecord]):
    for record in plugins:
        if record.status != "not loaded":
            continue  # disabled, or refused from its metadata: its module is never imported
        module = _discovery.load_entry_point(record)
        if module is not None:
            yield record, module


def _contribution(pm: pluggy.PluginManager, record: _discovery.PluginRecord, plugin: Any) -> _Contribution | None:
    """Call one plugin's hooks and check what they return; on any failure, record it and drop the plugin.

    A failure is anything raised, BaseExceptions included, but a real Ctrl-C (see ``_isolation``).
    """
    since = _isolation.mark()
    try:
        pm.register(plugin, name=f"{record.distribution}:{record.name}")
    except BaseException as exc:  # noqa: BLE001 - e.g. a hookimpl whose arguments match no hookspec
        if _isolation.is_user_interrupt(exc, since):
            raise
        record.fail(f"{type(exc).__name__}: {exc}", exc)
        return None
    try:
        return _call_hooks(pm, record, plugin)
    except BaseException as exc:  # noqa: BLE001 - any failure of a plugin must not break flambeau
        if _isolation.is_user_interrupt(exc, since):
            raise
        pm.unregister(plugin)
        record.fail(str(exc) if isinstance(exc, _PluginError) else f"{type(exc).__name__}: {exc}",
                    exc.__cause__ if isinstance(exc, _PluginError) and exc.__cause__ else exc)
        return None


class _PluginError(Exception):
    """A plugin returned something the registry cannot take."""


_HOOKS = ("flambeau_declare_ops", "flambeau_register_kernels", "flambeau_register_gradients",
          "flambeau_autograd_engine")


def _impl(pm: pluggy.PluginManager, plugin: Any, hook_name: str) -> Any:
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        if impl.plugin is plugin:
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                raise _PluginError(f"{hook_name} is a hook wrapper; flambeau's hooks take plain implementations")
            return impl.function
    return None


def _call(pm: pluggy.PluginManager, plugin: Any, hook_name: str) -> Any:
    fn = _impl(pm, plugin, hook_name)
    if fn is None:
        return None
    since = _isolation.mark()
    try:
        return fn()
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt... from a hook are its failure
        if _isolation.is_user_interrupt(exc, since):
            raise
        raise _PluginError(f"{hook_name} raised {type(exc).__name__}: {exc}") from exc


def _call_hooks(pm: pluggy.PluginManager, record: _discovery.PluginRecord, plugin: Any) -> _Contribution:
    unknown = [name for name in dir(plugin) if name.startswith("flambeau_") and name not in _HOOKS
               and getattr(getattr(plugin, name, None), f"{PROJECT}_impl", None) is not None]
    if unknown:
        raise _PluginError(f"it implements unknown hooks {unknown} (known: {list(_HOOKS)})")
    c = _Contribution()
    decls = list(_call(pm, plugin, "flambeau_declare_ops") or ())
    for decl in decls:
        _check_decl(record, decl, c)
    kernels = _call(pm, plugin, "flambeau_register_kernels") or {}
    if not hasattr(kernels, "items"):
        raise _PluginError(f"flambeau_register_kernels returned {type(kernels).__name__}, not a mapping")
    for key, kernel in kernels.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
            raise _PluginError(f"flambeau_register_kernels: key {key!r} is not (backend name, op name)")
        if not callable(kernel):
            raise _PluginError(f"flambeau_register_kernels: the kernel for {key!r} is not callable")
        c.kernels[key] = kernel
    gradients = _call(pm, plugin, "flambeau_register_gradients") or {}
    if not hasattr(gradients, "items"):
        raise _PluginError(f"flambeau_register_gradients returned {type(gradients).__name__}, not a mapping")
    for name, formula in gradients.items():
        if not isinstance(name, str) or not callable(formula):
            raise _PluginError(f"flambeau_register_gradients: {name!r} must map an op name to a callable")
        c.gradients[name] = formula
    c.engine = _call(pm, plugin, "flambeau_autograd_engine")
    return c


def _no_checks(*args: Any) -> None:
    """The meta function of a view or dynamic op declared without one: it checks nothing."""


def _check_decl(record: _discovery.PluginRecord, decl: Any, c: _Contribution) -> None:
    if not isinstance(decl, OpDecl):
        raise _PluginError(f"flambeau_declare_ops returned a {type(decl).__name__}, not a flambeau.ops.OpDecl")
    name = decl.name
    # An op's function and its in-place form ("add_") share one namespace with every other op's.
    for fname in [name] + ([name + "_"] if decl.inplace else []):
        if fname in FUNCTIONS or fname in c.functions:
            owner = (getattr(getattr(FUNCTIONS[fname], "_op", None), "provider", "another package")
                     if fname in FUNCTIONS else record.distribution)
            raise _PluginError(f"it declares the op {fname!r}, which {owner} already declares")
    if decl.meta is None:
        if decl.returns_out:
            raise _PluginError(f"op {name!r}: a {decl.kind} op needs a meta function (output shapes and dtypes)")
        decl.meta = _no_checks  # view/dynamic metas only check; a composite-only op may have none
    core = record.distribution == _discovery.CORE_DISTRIBUTION
    if not core:
        # Generated methods are set on Tensor: never let a plugin replace one of the core's own.
        for method in ([name] if decl.method else []) + ([name + "_"] if decl.inplace else []):
            if method in _core_tensor_attrs():
                raise _PluginError(f"op {name!r} would replace flambeau.Tensor.{method}")
    decl.provider = record.distribution
    try:
        c.functions[name] = _codegen.build(decl)
        if decl.inplace:
            c.functions[name + "_"] = _codegen.build(decl, inplace=True)
    except Exception as exc:  # noqa: BLE001
        raise _PluginError(f"op {name!r} cannot be built: {type(exc).__name__}: {exc}") from exc
    c.ops.append(decl)


def _core_tensor_attrs() -> frozenset[str]:
    """Tensor's own attributes (class body and the core's hand-written methods), before any op is installed."""
    cached = _state.get("tensor_attrs")
    if cached is None:
        from .. import _methods
        from .._tensor import Tensor

        cached = frozenset(dir(Tensor)) | frozenset(getattr(_methods, "_METHODS", {}))
        _state["tensor_attrs"] = cached
    return cached


def _commit(record: _discovery.PluginRecord, c: _Contribution) -> None:
    for decl in c.ops:
        OPS[decl.name] = decl
        record.ops.append(decl.name)
    FUNCTIONS.update(c.functions)
    for (backend_name, op_name), kernel in c.kernels.items():
        key = (backend_name, op_name)
        owner = HOOK_KERNEL_PROVIDERS.get(key)
        if owner is not None:
            warnings.warn(f"flambeau: plugin {record.name!r} from {record.distribution} registers a kernel for "
                          f"{key}, which {owner} already registers; keeping the first",
                          _discovery.PluginWarning, stacklevel=_discovery.user_stacklevel())
            continue
        HOOK_KERNELS.setdefault(backend_name, {})[op_name] = kernel
        HOOK_KERNEL_PROVIDERS[key] = record.distribution
        record.kernels.append(key)
    for op_name, formula in c.gradients.items():
        if op_name in GRADIENTS:
            warnings.warn(f"flambeau: plugin {record.name!r} from {record.distribution} registers a gradient for "
                          f"{op_name!r}, which {GRADIENT_PROVIDERS[op_name]} already registers; keeping the first",
                          _discovery.PluginWarning, stacklevel=_discovery.user_stacklevel())
            continue
        GRADIENTS[op_name] = formula
        GRADIENT_PROVIDERS[op_name] = record.distribution


def _install_engine(engine: Any, record: _discovery.PluginRecord) -> None:
    since = _isolation.mark()
    try:
        if hasattr(engine, "install"):
            engine.install()
    except BaseException as exc:  # noqa: BLE001 - autograd failing must leave the tensor library usable
        if _isolation.is_user_interrupt(exc, since):
            raise
        record.fail(f"its autograd engine failed to install: {type(exc).__name__}: {exc}", exc)
        return
    _dispatch.set_autograd_engine(engine)


# -- backends -------------------------------------------------------------------------

def backend_distribution(device_type: str) -> str:
    record = backend_records.get(device_type)
    if record is not None:
        return f"{record.distribution} {record.version}"
    return KNOWN_BACKEND_DISTRIBUTIONS.get(device_type, f"a package providing the '{device_type}' backend")


class BackendUnavailable(RuntimeError):
    """A device type whose backend is not installed, or failed to load."""


def load_backend(device_type: str) -> Any:
    """Import a backend, build its frozen kernel table; the first use of its device type."""
    with _lock:
        built = dict.get(_dispatch.TABLES, device_type)
        if built is not None:  # another thread loaded it while this one waited for the lock
            return built
        if not _state["loaded"]:
            raise RuntimeError(
                f"flambeau is loading its plugins: the '{device_type}' device cannot be used until "
                "`import flambeau` has finished (a plugin used it at import time; defer that work)"
            )
        record = backend_records.get(device_type)
        if record is None and device_type in unsettled:
            first = unsettled[device_type][0]
            raise BackendUnavailable(f"no backend for the device type '{device_type}': {first.reason}")
        if record is None:
            dist = KNOWN_BACKEND_DISTRIBUTIONS.get(device_type)
            hint = f"install {dist}" if dist else "install the distribution that provides it"
            raise BackendUnavailable(f"no installed flambeau backend provides the device type '{device_type}': {hint}")
        if record.status == "disabled":
            raise BackendUnavailable(
                f"the '{device_type}' backend ({record.distribution} {record.version}) is disabled by "
                "FLAMBEAU_DISABLE_PLUGINS"
            )
        if record.status == "failed":
            raise BackendUnavailable(_failed_message(record)) from record.error
        if device_type in _loading_backends:
            raise RuntimeError(
                f"the '{device_type}' backend is being loaded and loading is not re-entrant: its own import or "
                f"factory used the '{device_type}' device"
            )
        _loading_backends.add(device_type)
        try:
            with _isolation.watching_sigint():
                return _build_backend(device_type, record)
        finally:
            _loading_backends.discard(device_type)


_loading_backends: set[str] = set()


def _build_backend(device_type: str, record: _discovery.PluginRecord) -> Any:
    """Import a backend's module, call its factory, freeze its table (under the loader's lock)."""
    from ..ops._registry import KernelTable

    factory = _discovery.load_entry_point(record)
    if factory is None:
        raise BackendUnavailable(_failed_message(record)) from record.error
    since = _isolation.mark()
    try:
        backend = factory()
        if not isinstance(backend, Backend):
            raise TypeError(f"the factory returned {type(backend).__name__}, not a flambeau.plugins.Backend")
        if backend.name != device_type:
            raise ValueError(f"the backend calls itself {backend.name!r}, but its entry point is {device_type!r}")
        table: KernelTable = build_table(backend, dict(backend.kernels()), record.distribution)
    except BaseException as exc:  # noqa: BLE001 - a broken backend must not break flambeau (nor exit it)
        if _isolation.is_user_interrupt(exc, since):
            raise
        record.fail(f"{type(exc).__name__}: {exc}", exc)
        raise BackendUnavailable(_failed_message(record)) from exc
    record.status = "loaded"
    BACKENDS[device_type] = backend
    return table


def _failed_message(record: _discovery.PluginRecord) -> str:
    head = f"the '{record.name}' backend from {record.distribution} {record.version} failed to load: {record.reason}. "
    if record.mismatch:
        return head + (
            f"To fix it, reinstall or upgrade {record.distribution} so that it matches flambeau-core-tensor "
            f"{_discovery.core_version()} (`python -m flambeau info` shows what is installed), or uninstall it.")
    cause = " (the original error is chained below)" if record.error is not None else ""
    return head + (f"The failure is the backend's own{cause}: fix what it names, or skip the backend with "
                   f"FLAMBEAU_DISABLE_PLUGINS={record.distribution} (`python -m flambeau info` shows what is "
                   "installed).")


def loaded_backend(device_type: str) -> Backend:
    """The backend object for a device type, loading it if needed."""
    return _dispatch.TABLES[device_type].backend


# -- public through flambeau.plugins (bound there by flambeau._late_bindings) -----------------

def plugins() -> list[_discovery.PluginRecord]:
    """What is known of every ``flambeau`` plugin: distribution, status, ops, failure."""
    return list(plugin_records)


def backends() -> list[_discovery.PluginRecord]:
    """What is known of every installed backend (loaded or not)."""
    return list(all_backend_records)

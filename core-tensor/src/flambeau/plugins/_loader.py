"""Loading: plugins at ``import flambeau``, backends on first use of their device type.

Loading happens once, after core-tensor has finished importing, and is not re-entrant.
It calls every hook, then freezes the registry; nothing here runs per op.
"""
from __future__ import annotations

import threading
from typing import Any

import pluggy

from ..ops import _codegen, _dispatch
from ..ops._decl import OpDecl
from ..ops._registry import FUNCTIONS, GRADIENTS, HOOK_KERNELS, OPS, build_table
from . import _discovery
from ._backend import Backend
from ._hookspecs import PROJECT, FlambeauSpec

_lock = threading.RLock()
_state: dict[str, Any] = {"loaded": False, "loading": False}
plugin_records: list[_discovery.PluginRecord] = []
backend_records: dict[str, _discovery.PluginRecord] = {}
BACKENDS: dict[str, Backend] = {}

#: Device types a first-party distribution provides, for "install X" messages.
KNOWN_BACKEND_DISTRIBUTIONS = {"cpu": "flambeau-backend-cpu", "cuda": "flambeau-backend-cuda",
                               "meta": "flambeau-backend-meta"}


def plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(FlambeauSpec)
    return pm


def load() -> None:
    """Discover and load every plugin, then freeze the registry; called once by ``import flambeau``."""
    with _lock:
        if _state["loaded"]:
            return
        if _state["loading"]:
            raise RuntimeError("flambeau plugins are already loading (a plugin imported flambeau re-entrantly)")
        _state["loading"] = True
        try:
            _load()
            _state["loaded"] = True
        finally:
            _state["loading"] = False


def _load() -> None:
    from .._core_ops import plugin as core_plugin

    pm = plugin_manager()
    pm.register(core_plugin, name="core")
    core_record = _discovery.PluginRecord("core", _discovery.PLUGIN_GROUP, "flambeau._core_ops.plugin",
                                          _discovery.CORE_DISTRIBUTION, _discovery.core_version(), "loaded")
    providers: dict[int, _discovery.PluginRecord] = {id(core_plugin): core_record}
    plugins, backends = _discovery.scan()
    plugin_records[:] = [core_record, *plugins]
    backend_records.update({r.name: r for r in backends})
    for record in plugins:
        if record.status != "not loaded":
            continue
        module = _discovery.load_entry_point(record)
        if module is None:
            continue
        try:
            pm.register(module, name=record.name)
        except Exception as exc:  # noqa: BLE001 - e.g. a hookimpl that matches no hookspec
            record.fail(f"{type(exc).__name__}: {exc}", exc)
            continue
        record.status = "loaded"
        providers[id(module)] = record

    _collect_declarations(pm, providers)
    _collect_gradients(pm, providers)
    _collect_kernels(pm, providers)
    _generate_functions()
    engine = _call_hook(pm, providers, "flambeau_autograd_engine")
    if engine is not None:
        _dispatch.set_autograd_engine(engine)
        if hasattr(engine, "install"):
            engine.install()


def _results(pm: pluggy.PluginManager, providers: dict, hook_name: str):
    """(record, result) for each plugin's implementation of a hook; failures isolate that plugin."""
    hook = getattr(pm.hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):
        record = providers.get(id(impl.plugin))
        try:
            yield record, impl.function()
        except Exception as exc:  # noqa: BLE001
            if record is not None:
                record.fail(f"{hook_name} raised {type(exc).__name__}: {exc}", exc)


def _call_hook(pm, providers, hook_name):
    for _record, result in _results(pm, providers, hook_name):
        if result is not None:
            return result
    return None


def _collect_declarations(pm, providers) -> None:
    for record, decls in _results(pm, providers, "flambeau_declare_ops"):
        for decl in decls or ():
            if not isinstance(decl, OpDecl):
                record.fail(f"flambeau_declare_ops returned {type(decl).__name__}, not OpDecl")
                break
            if decl.name in OPS:
                record.fail(f"op {decl.name!r} is already declared by {OPS[decl.name].provider}")
                continue
            decl.provider = record.distribution if record else "?"
            OPS[decl.name] = decl
            if record is not None:
                record.ops.append(decl.name)


def _collect_gradients(pm, providers) -> None:
    for _record, formulas in _results(pm, providers, "flambeau_register_gradients"):
        GRADIENTS.update(formulas or {})


def _collect_kernels(pm, providers) -> None:
    for _record, kernels in _results(pm, providers, "flambeau_register_kernels"):
        for (backend_name, op_name), kernel in (kernels or {}).items():
            HOOK_KERNELS.setdefault(backend_name, {})[op_name] = kernel


def _generate_functions() -> None:
    for decl in OPS.values():
        FUNCTIONS[decl.name] = _codegen.build(decl)
        if decl.inplace:
            FUNCTIONS[decl.name + "_"] = _codegen.build(decl, inplace=True)


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
    from ..ops._registry import KernelTable

    with _lock:
        record = backend_records.get(device_type)
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
        factory = _discovery.load_entry_point(record)
        if factory is None:
            raise BackendUnavailable(_failed_message(record)) from record.error
        try:
            backend = factory()
            if not isinstance(backend, Backend):
                raise TypeError(f"the factory returned {type(backend).__name__}, not a flambeau.plugins.Backend")
            if backend.name != device_type:
                raise ValueError(f"the backend calls itself {backend.name!r}, but its entry point is {device_type!r}")
            table: KernelTable = build_table(backend, dict(backend.kernels()))
        except Exception as exc:  # noqa: BLE001
            record.fail(f"{type(exc).__name__}: {exc}", exc)
            raise BackendUnavailable(_failed_message(record)) from exc
        record.status = "loaded"
        BACKENDS[device_type] = backend
        return table


def _failed_message(record: _discovery.PluginRecord) -> str:
    return (
        f"the '{record.name}' backend from {record.distribution} {record.version} failed to load: {record.reason}. "
        f"Reinstall or upgrade {record.distribution} (see `python -m flambeau info`), or remove it."
    )


def loaded_backend(device_type: str) -> Backend:
    """The backend object for a device type, loading it if needed."""
    return _dispatch.TABLES[device_type].backend


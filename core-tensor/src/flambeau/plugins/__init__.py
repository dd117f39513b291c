"""Plugin contracts: hook specifications, the Backend base class, discovery and the environment report.

Two entry-point groups:

- ``flambeau.backends``: ``NAME = "module:factory"``; the factory returns a :class:`Backend`.
- ``flambeau``: pluggy plugins implementing the hooks in :class:`FlambeauSpec`.
"""
from __future__ import annotations

from ._backend import CORE_API_VERSION, Backend
from ._discovery import BACKEND_GROUP, PLUGIN_GROUP, PluginRecord, PluginWarning
from ._hookspecs import FlambeauSpec, hookimpl, hookspec

# This package is imported low in core-tensor's layers (the op registry's modules sit beside it),
# while its loader stands at the top (it runs plugins that use the whole core). So the loader's
# public names, listed here, are bound onto this module by flambeau._late_bindings at `import
# flambeau`, before any plugin loads.
_LOADER_NAMES = ("BackendUnavailable", "choose_backend", "load", "loaded_backend", "plugins", "backends")

__all__ = ["Backend", "CORE_API_VERSION", "FlambeauSpec", "hookimpl", "hookspec", "PluginRecord", "PluginWarning",
           "BackendUnavailable", "load", "PLUGIN_GROUP", "BACKEND_GROUP", "plugins", "backends", "loaded_backend",
           "choose_backend"]

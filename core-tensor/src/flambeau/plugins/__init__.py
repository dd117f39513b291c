"""Plugin contracts: hook specifications, the Backend base class, discovery and the environment report.

Two entry-point groups:

- ``flambeau.backends``: ``NAME = "module:factory"``; the factory returns a :class:`Backend`.
- ``flambeau``: pluggy plugins implementing the hooks in :class:`FlambeauSpec`.
"""
from __future__ import annotations

from ._backend import CORE_API_VERSION, Backend
from ._discovery import BACKEND_GROUP, PLUGIN_GROUP, PluginRecord, PluginWarning
from ._hookspecs import FlambeauSpec, hookimpl, hookspec
from ._loader import BackendUnavailable, choose_backend, load, loaded_backend


def plugins() -> list[PluginRecord]:
    """What is known of every ``flambeau`` plugin: distribution, status, ops, failure."""
    from ._loader import plugin_records

    return list(plugin_records)


def backends() -> list[PluginRecord]:
    """What is known of every installed backend (loaded or not)."""
    from ._loader import all_backend_records

    return list(all_backend_records)


__all__ = ["Backend", "CORE_API_VERSION", "FlambeauSpec", "hookimpl", "hookspec", "PluginRecord", "PluginWarning",
           "BackendUnavailable", "load", "PLUGIN_GROUP", "BACKEND_GROUP", "plugins", "backends", "loaded_backend",
           "choose_backend"]

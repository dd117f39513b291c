"""Finding plugins and backends through entry points, checking them, and recording failures."""
from __future__ import annotations

import os
import traceback
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from ._backend import CORE_API_VERSION

PLUGIN_GROUP = "flambeau"
BACKEND_GROUP = "flambeau.backends"
CORE_DISTRIBUTION = "flambeau-core-tensor"


class PluginWarning(UserWarning):
    """A plugin or backend could not be loaded; flambeau goes on without it."""


@dataclass
class PluginRecord:
    """What is known of one entry point: where it comes from and whether it loaded."""

    name: str
    group: str
    value: str
    distribution: str
    version: str
    status: str = "not loaded"  # "loaded", "failed", "disabled", "not loaded"
    reason: str = ""
    error: BaseException | None = field(default=None, repr=False)
    ops: list[str] = field(default_factory=list)

    def fail(self, reason: str, error: BaseException | None = None) -> None:
        self.status, self.reason, self.error = "failed", reason, error
        warnings.warn(
            f"flambeau: {self.group} plugin {self.name!r} from {self.distribution} {self.version} "
            f"was not loaded: {reason}",
            PluginWarning,
            stacklevel=2,
        )

    @property
    def traceback(self) -> str:
        if self.error is None:
            return ""
        return "".join(traceback.format_exception(self.error))


def disabled_plugins() -> set[str]:
    """Names listed in ``FLAMBEAU_DISABLE_PLUGINS`` (comma-separated)."""
    raw = os.environ.get("FLAMBEAU_DISABLE_PLUGINS", "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def core_version() -> str:
    try:
        return metadata.version(CORE_DISTRIBUTION)
    except metadata.PackageNotFoundError:  # running from a source tree
        return CORE_API_VERSION + ".0"


def incompatibility(dist: metadata.Distribution | None) -> str | None:
    """Why a distribution does not fit this core, from its metadata alone; None if it fits."""
    if dist is None:
        return None
    from packaging.requirements import Requirement  # deferred: only needed at load time

    for line in dist.requires or ():
        req = Requirement(line)
        if req.name.replace("_", "-").lower() != CORE_DISTRIBUTION or req.marker is not None:
            continue
        version = core_version()
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            return (
                f"it requires {CORE_DISTRIBUTION}{req.specifier} but {version} is installed "
                f"(core API {CORE_API_VERSION}); install a version of it built for this core"
            )
        return None
    name = dist.metadata["Name"]
    if name and name.lower() == CORE_DISTRIBUTION:
        return None
    return f"it does not declare which {CORE_DISTRIBUTION} it targets (no Requires-Dist on it)"


def scan() -> tuple[list[PluginRecord], list[PluginRecord]]:
    """The ``flambeau`` plugins and ``flambeau.backends`` entries, read from metadata only."""
    plugins, backends = [], []
    disabled = disabled_plugins()
    everything = metadata.entry_points()  # one scan of installed metadata for both groups
    for ep in list(everything.select(group=PLUGIN_GROUP)) + list(everything.select(group=BACKEND_GROUP)):
        dist = ep.dist
        record = PluginRecord(
            name=ep.name,
            group=ep.group,
            value=ep.value,
            distribution=dist.metadata["Name"] if dist is not None else "?",
            version=dist.version if dist is not None else "?",
        )
        record._entry_point = ep  # type: ignore[attr-defined]
        if ep.name in disabled:
            record.status, record.reason = "disabled", "listed in FLAMBEAU_DISABLE_PLUGINS"
        else:
            reason = incompatibility(dist)
            if reason:
                record.fail(reason)
        (plugins if ep.group == PLUGIN_GROUP else backends).append(record)
    return plugins, backends


def load_entry_point(record: PluginRecord) -> Any:
    """Import the object an entry point names; on failure, record it and return None."""
    try:
        return record._entry_point.load()  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - any failure of a plugin must not break flambeau
        record.fail(f"{type(exc).__name__}: {exc}", exc)
        return None

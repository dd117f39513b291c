"""Finding plugins and backends through entry points, checking them, and recording failures."""
from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _entry_points, _isolation
from ._backend import CORE_API_VERSION

if TYPE_CHECKING:  # the objects are _entry_points' (importlib.metadata's where it must read them)
    from importlib import metadata

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
    #: the (backend, op) kernels it registered through the hook
    kernels: list[tuple[str, str]] = field(default_factory=list)
    #: whether the failure is one of versions (the core range it declares, or an ImportError of a
    #: flambeau name), for which "reinstall a matching release" is the right advice
    mismatch: bool = False

    def fail(self, reason: str, error: BaseException | None = None, *, mismatch: bool = False,
             warn: bool = True) -> None:
        """Mark the entry point failed and warn, once: a second failure adds to the reason silently."""
        if self.status == "failed":
            self.reason += f"; then {reason}"
            return
        self.status, self.reason, self.error = "failed", reason, error
        self.mismatch = mismatch or is_flambeau_import_error(error)
        if warn:
            kind = "backend" if self.group == BACKEND_GROUP else "plugin"
            warnings.warn(
                f"flambeau: {kind} {self.name!r} from {self.distribution} {self.version} was not loaded: {reason}",
                PluginWarning,
                stacklevel=user_stacklevel(),
            )

    @property
    def traceback(self) -> str:
        if self.error is None:
            return ""
        import traceback  # only when a failure is shown: `import flambeau` does not load it

        return "".join(traceback.format_exception(self.error))


def is_flambeau_import_error(error: BaseException | None) -> bool:
    """An ImportError of a flambeau module or name: the plugin was built against another core."""
    if not isinstance(error, ImportError):
        return False
    return (error.name or "").partition(".")[0] == "flambeau"


def _internal(filename: str) -> bool:
    """Whether a frame's file is flambeau's (any distribution's part of the package), pluggy's or
    the import machinery's: frames a warning should not point at."""
    if filename.startswith(("<frozen importlib", "<flambeau ")):  # the import machinery; generated op functions
        return True
    pkg = sys.modules.get("flambeau")
    roots = list(getattr(pkg, "__path__", ())) + [os.path.dirname(os.path.dirname(__file__))]
    pluggy = sys.modules.get("pluggy")
    if pluggy is not None and getattr(pluggy, "__file__", None):
        roots.append(os.path.dirname(pluggy.__file__))
    return any(filename.startswith(root + os.sep) for root in roots)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame outside flambeau (the
    user's ``import flambeau``, the line that used a device, or a plugin's own code), for the
    function that calls this one and then ``warnings.warn``."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
        # warnings.warn skips the import machinery's frames itself once stacklevel > 1
        if frame is not None and not frame.f_code.co_filename.startswith("<frozen importlib"):
            level += 1
    return level if frame is not None else 1


def disabled_plugins() -> set[str]:
    """Names listed in ``FLAMBEAU_DISABLE_PLUGINS`` (comma-separated entry-point or distribution names)."""
    raw = os.environ.get("FLAMBEAU_DISABLE_PLUGINS", "")
    return {_normalize(name) for name in raw.split(",") if name.strip()}


def _normalize(name: str) -> str:
    # Distribution names compare as PEP 503 does: case, "-", "_" and "." are equivalent.
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def distribution_name(dist: metadata.Distribution | None) -> str:
    """A distribution's name; for a broken install without METADATA, its ``.dist-info`` folder's stem."""
    if dist is None:
        return "?"
    try:
        name = dist.metadata.get("Name")
    except Exception:  # noqa: BLE001 - unreadable metadata: fall back to the folder name
        name = None
    if name:
        return name
    path = getattr(dist, "_path", None)  # PathDistribution: the .dist-info folder
    return str(path.name).split("-")[0] if path is not None else "?"


def distribution_version(dist: metadata.Distribution | None) -> str:
    """A distribution's version, or ``"?"`` for a broken install."""
    try:
        return (dist.metadata.get("Version") if dist is not None else None) or "?"
    except Exception:  # noqa: BLE001
        return "?"


def core_version() -> str:
    global _core_version
    if _core_version is None:  # read once: every plugin's requirement is checked against it
        _core_version = _entry_points.version(CORE_DISTRIBUTION) or CORE_API_VERSION + ".0"  # None: a source tree
    return _core_version


_core_version: str | None = None


#: A requirement's project name, as packaging reads it (PEP 508).
_LEADING_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_RELEASE = re.compile(r"\d+(?:\.\d+)*")
_PLAIN_CLAUSE = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*(\d+(?:\.\d+)*)\s*")


def _plainly_satisfied(spec: str, version: str) -> bool:
    """Whether ``version`` plainly satisfies ``spec`` (the rest of a Requires-Dist line after the
    name), in the forms build tools write: ``""``, ``"<0.2,>=0.1"``, ``" (<0.2,>=0.1)"``.

    Only release versions (``1.2.3``) are read, for which PEP 440 comparison is comparison of
    zero-padded integer tuples. False means "not settled here", not "unsatisfied".
    """
    spec = spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    if not spec:
        return True
    if _RELEASE.fullmatch(version) is None:
        return False
    have = [int(p) for p in version.split(".")]
    for clause in spec.split(","):
        m = _PLAIN_CLAUSE.fullmatch(clause)
        if m is None:
            return False
        op, text = m.groups()
        want = [int(p) for p in text.split(".")]
        width = max(len(have), len(want))
        a = tuple(have + [0] * (width - len(have)))
        b = tuple(want + [0] * (width - len(want)))
        if not {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]:
            return False
    return True


def incompatibility(dist: metadata.Distribution | None) -> str | None:
    """Why a distribution does not fit this core, from its metadata alone; None if it fits.

    Every ``Requires-Dist`` on flambeau-core-tensor that applies here (markers evaluated, extras
    excluded) must contain the installed version. A distribution that states no such range is
    refused too: nothing says its native code was built for this core.
    """
    if dist is None:
        return None
    if _normalize(distribution_name(dist)) == CORE_DISTRIBUTION:
        return None
    version = core_version()
    declared = False
    for line in dist.requires or ():
        line = line.strip()
        name = _LEADING_NAME.match(line)
        if name is None or _normalize(name.group()) != CORE_DISTRIBUTION:
            continue  # a requirement on another project (or unparseable): never about the core
        if _plainly_satisfied(line[name.end():], version):
            declared = True
            continue
        # Anything the quick reading does not settle (extras, markers, ~=, pre-releases, a
        # failure whose message quotes the specifier) goes to packaging, imported only then:
        # it costs ~12 ms, a tenth of `import flambeau`.
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue  # pip would not have installed it; not ours to judge
        if _normalize(req.name) != CORE_DISTRIBUTION:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # a requirement of an extra, or of another platform
        declared = True
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            return (
                f"it requires {CORE_DISTRIBUTION}{req.specifier} but {version} is installed "
                f"(core API {CORE_API_VERSION}); install a release of {distribution_name(dist)} "
                f"built for {CORE_DISTRIBUTION} {version}, or a {CORE_DISTRIBUTION} in that range"
            )
    if declared:
        return None
    return f"it does not declare which {CORE_DISTRIBUTION} it targets (no Requires-Dist on it)"


def scan() -> tuple[list[PluginRecord], list[PluginRecord]]:
    """The ``flambeau`` plugins and ``flambeau.backends`` entries, read from metadata only.

    Both lists are sorted by distribution then entry-point name, so that which plugin wins a
    conflict does not depend on the order of ``sys.path``.
    """
    plugins, backends = [], []
    disabled = disabled_plugins()
    everything = _entry_points.entry_points()  # one scan of installed metadata for both groups
    eps = [*everything.select(group=PLUGIN_GROUP), *everything.select(group=BACKEND_GROUP)]
    for ep in eps:
        dist = ep.dist
        record = PluginRecord(
            name=ep.name,
            group=ep.group,
            value=ep.value,
            distribution=distribution_name(dist),
            version=distribution_version(dist),
        )
        record._entry_point = ep  # type: ignore[attr-defined]
        (plugins if ep.group == PLUGIN_GROUP else backends).append(record)
    order = lambda r: (_normalize(r.distribution), r.name)  # noqa: E731
    plugins.sort(key=order)
    backends.sort(key=order)
    for record in [*plugins, *backends]:
        if _normalize(record.name) in disabled or _normalize(record.distribution) in disabled:
            record.status, record.reason = "disabled", "listed in FLAMBEAU_DISABLE_PLUGINS"
        else:
            reason = incompatibility(record._entry_point.dist)  # type: ignore[attr-defined]
            if reason:
                record.fail(reason, mismatch=True)
    return plugins, backends


def load_entry_point(record: PluginRecord) -> Any:
    """Import the object an entry point names; on failure, record it and return None.

    Whatever the import raises counts as a failure, SystemExit and KeyboardInterrupt included,
    except a KeyboardInterrupt caused by a real Ctrl-C (see ``_isolation``), which propagates.
    """
    since = _isolation.mark()
    try:
        return record._entry_point.load()  # type: ignore[attr-defined]
    except BaseException as exc:  # noqa: BLE001 - any failure of a plugin must not break flambeau
        if _isolation.is_user_interrupt(exc, since):
            raise
        record.fail(f"{type(exc).__name__}: {exc}", exc)
        return None

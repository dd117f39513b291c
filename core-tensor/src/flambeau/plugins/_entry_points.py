"""Installed distributions' entry points and metadata, read without ``importlib.metadata``.

``import importlib.metadata`` costs ~25 ms (it brings in email, zipfile, tempfile, socket...),
a sixth of ``import flambeau``, for what discovery needs: the ``entry_points.txt`` of the
``.dist-info`` folders on ``sys.path`` and three header fields of their ``METADATA``. This
module reads them directly, with ``importlib.metadata``'s rules: every ``sys.path`` folder in
order, the first distribution of a name wins, ``EntryPoint.load`` imports ``module:attr``.

Anything it does not read itself goes to ``importlib.metadata`` (imported only then): a zip
file on ``sys.path``, a meta path finder other than ``PathFinder`` that lists distributions, an
``.egg-info`` distribution's metadata.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any

#: How many times :func:`entry_points` scanned the installed distributions (once per process).
scans = 0


class Metadata:
    """The header fields of a ``METADATA`` file (the first value of each; ``Requires-Dist`` all)."""

    def __init__(self, fields: dict[str, str], requires: list[str]) -> None:
        self._fields = fields
        self.requires = requires

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields.get(key.lower(), default)

    def __getitem__(self, key: str) -> Any:
        return self._fields.get(key.lower())


class Distribution:
    """One ``.dist-info`` (or ``.egg-info``) folder, as much of ``importlib.metadata.Distribution``
    as discovery uses: ``metadata``, ``requires``, ``version``, ``_path``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._metadata: Metadata | None = None
        self._full: Any = None

    def _delegate(self) -> Any:
        if self._full is None:
            from importlib import metadata

            self._full = metadata.PathDistribution(_pathlib_path(self.path))
        return self._full

    @property
    def metadata(self) -> Any:
        if self.path.endswith(".egg-info"):
            return self._delegate().metadata
        if self._metadata is None:
            self._metadata = _read_metadata(os.path.join(self.path, "METADATA"))
        return self._metadata

    @property
    def requires(self) -> list[str] | None:
        if self.path.endswith(".egg-info"):
            return self._delegate().requires
        return self.metadata.requires or None

    @property
    def version(self) -> str | None:
        return self.metadata.get("Version")

    @property
    def _path(self) -> Any:  # importlib.metadata.PathDistribution's, for the folder-name fallback
        return _pathlib_path(self.path)


def _pathlib_path(path: str) -> Any:
    import pathlib  # only for the rare cases above: pathlib is not otherwise needed at import

    return pathlib.Path(path)


def _read_metadata(path: str) -> Metadata:
    fields: dict[str, str] = {}
    requires: list[str] = []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:  # a broken install without METADATA: no fields
        return Metadata(fields, requires)
    key = None
    for line in text.split("\n"):
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        if line[0] in " \t" and key is not None:  # a folded continuation line
            if key == "requires-dist" and requires:
                requires[-1] += " " + line.strip()
            elif key in fields:
                fields[key] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        value = value.strip()
        if key == "requires-dist":
            requires.append(value)
        fields.setdefault(key, value)
    return Metadata(fields, requires)


_ENTRY = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class EntryPoint:
    """One entry point: ``name = value`` in ``[group]`` of a distribution's ``entry_points.txt``."""

    def __init__(self, name: str, value: str, group: str, dist: Distribution | None) -> None:
        self.name, self.value, self.group, self.dist = name, value, group, dist

    def load(self) -> Any:
        """The object ``value`` names (``module`` or ``module:attr.attr``), importing the module."""
        import importlib

        match = _ENTRY.match(self.value)
        if match is None:
            raise ValueError(f"invalid entry point value {self.value!r}")
        obj = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            obj = getattr(obj, attr)
        return obj


class EntryPoints(list):
    def select(self, group: str) -> list[EntryPoint]:
        return [ep for ep in self if ep.group == group]


def _parse_entry_points(text: str, dist: Distribution | None) -> list[EntryPoint]:
    found, group = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        name, sep, value = line.partition("=")
        if sep and group is not None:
            found.append(EntryPoint(name.strip(), value.strip(), group, dist))
    return found


def _needs_importlib_metadata() -> bool:
    """Whether distributions may come from somewhere this module does not read."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and getattr(finder, "__name__", "") != "PathFinder":
            return True
    return any(os.path.isfile(entry) for entry in sys.path if entry)  # a zip on sys.path


def distributions() -> list[Distribution]:
    """The installed distributions, the first of each name on ``sys.path`` (importlib.metadata's rule)."""
    seen: set[str] = set()
    found = []
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:  # not a folder (a path hook's name, a missing folder)
            continue
        for child in names:
            stem, ext = os.path.splitext(child)
            if ext.lower() not in (".dist-info", ".egg-info"):
                continue
            key = stem.partition("-")[0]
            if key in seen:
                continue
            seen.add(key)
            found.append(Distribution(os.path.join(folder, child)))
    return found


def entry_points() -> EntryPoints:
    """Every entry point of every installed distribution (one scan of ``sys.path``)."""
    global scans
    scans += 1
    if _needs_importlib_metadata():
        return EntryPoints(importlib_metadata_entry_points())
    result = EntryPoints()
    for dist in distributions():
        try:
            with open(os.path.join(dist.path, "entry_points.txt"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        result.extend(_parse_entry_points(text, dist))
    return result


def importlib_metadata_entry_points() -> list[Any]:
    """Every entry point, as importlib.metadata lists them (all groups, without its deprecated dict API)."""
    from importlib import metadata

    found = metadata.entry_points()
    if isinstance(found, dict):  # before Python 3.12: SelectableGroups, by group
        return [ep for group in sorted(found.groups) for ep in found.select(group=group)]
    return list(found)


def version(name: str) -> str | None:
    """The version of the installed distribution ``name`` (normalised as PEP 503 does), or None."""
    key = re.sub(r"[-_.]+", "_", name).lower()
    if _needs_importlib_metadata():
        from importlib import metadata

        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None
    for dist in distributions():
        stem = os.path.basename(dist.path).partition("-")[0]
        if re.sub(r"[-_.]+", "_", stem).lower() == key:
            return dist.version
    return None

"""``pkgutil.extend_path`` without importing pkgutil (and importlib.util, which it brings).

Other distributions ship subpackages into ``flambeau/`` (``flambeau/nn``, ``flambeau/optim``...)
and ``flambeau/utils/``; in an editable or split install these live in other folders of the
path, which a package's ``__path__`` must list. ``pkgutil`` and what it imports were ~3% of
``import flambeau``, for one function: this is that function's lookup (each path entry's finder
asked for the package's portion), less its support for ``.pkg`` files, which no flambeau
distribution ships.
"""
from __future__ import annotations

import sys
from typing import Any


def _finder(entry: str) -> Any:
    """The path entry finder for ``entry``, cached as the import system caches it (``pkgutil.get_importer``)."""
    try:
        return sys.path_importer_cache[entry]
    except KeyError:
        pass
    for hook in sys.path_hooks:
        try:
            finder = hook(entry)
        except ImportError:
            continue
        sys.path_importer_cache.setdefault(entry, finder)
        return finder
    return None


def extend_path(path: list[str], name: str) -> list[str]:
    """``path`` (a package's ``__path__``) with every other portion of package ``name`` on the path appended."""
    if not isinstance(path, list):
        return path
    parent, _, final = name.rpartition(".")
    if parent:
        try:
            search = sys.modules[parent].__path__
        except (KeyError, AttributeError):
            return path
    else:
        search = sys.path
    path = path[:]
    for entry in search:
        if not isinstance(entry, str):
            continue
        finder = _finder(entry)
        spec = finder.find_spec(final) if finder is not None and hasattr(finder, "find_spec") else None
        for portion in (spec.submodule_search_locations or []) if spec is not None else []:
            if portion not in path:
                path.append(portion)
    return path

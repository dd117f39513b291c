"""An on-disk cache of the generated op functions' code objects, like Python's own ``.pyc`` files.

Compiling the ~160 generated functions at every ``import flambeau`` costs 15 to 30 ms, a
fifth of the import. Their sources change only when a declaration (or the code generator)
does, so the code objects are kept, keyed by their exact source text, in one ``marshal``
file next to this module's ``.pyc``. Keying by the source makes a stale entry impossible:
changed source is simply a miss. Reading the cache trusts the same directory, with the same
format, that Python trusts for bytecode; it is only written where bytecode would be.
"""
from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from types import CodeType

#: Bumped when the file's layout changes; Python's bytecode magic covers the code objects.
_FORMAT = 1
#: Above this many entries, a save keeps only the ones this process used (no unbounded growth).
_MAX_ENTRIES = 2048

_loaded: dict[str, CodeType] | None = None
_used: dict[str, CodeType] = {}
_missed = False


def _path() -> str | None:
    try:
        return importlib.util.cache_from_source(__file__)[: -len(".pyc")] + ".ops.marshal"
    except (NotImplementedError, ValueError):  # no bytecode cache on this interpreter
        return None


def _load() -> dict[str, CodeType]:
    path = _path()
    try:
        with open(path, "rb") as f:  # type: ignore[arg-type]
            header, fmt, table = marshal.load(f)
        if header == importlib.util.MAGIC_NUMBER and fmt == _FORMAT and isinstance(table, dict):
            return table
    except Exception:  # noqa: BLE001 - absent, unreadable or corrupt: compile as if there were none
        pass
    return {}


def compiled(source: str, filename: str) -> CodeType:
    """The code object of ``source``, from the cache or freshly compiled.

    Compiled with ``dont_inherit=True``: the code never depends on this module's own
    ``from __future__`` imports (annotations stay as written).
    """
    global _loaded, _missed
    if _loaded is None:
        _loaded = _load()
    code = _loaded.get(source)
    if code is None or code.co_filename != filename:
        code = compile(source, filename, "exec", dont_inherit=True)
        _missed = True
    _used[source] = code
    return code


def save() -> None:
    """Write the cache if this process compiled anything new (called once, at the end of load)."""
    global _missed
    path = _path()
    if not _missed or path is None or sys.dont_write_bytecode:
        return
    table = {**(_loaded or {}), **_used}
    if len(table) > _MAX_ENTRIES:
        table = dict(_used)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            marshal.dump((importlib.util.MAGIC_NUMBER, _FORMAT, table), f)
        os.replace(tmp, path)  # atomic: a concurrent import sees the old file or the new one
        _missed = False
    except OSError:  # a read-only install: every import compiles, which is correct, only slower
        try:
            os.unlink(tmp)
        except OSError:
            pass

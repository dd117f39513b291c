"""The ops a composite calls, read from its code when its declaration does not list them.

A composite written before tiers (``OpDecl.uses`` is None) is scanned: the names and string
constants of its code, of the functions nested in it, and of the module-level functions of the
same package that it calls, recursively. Every one that names a declared op (``fn("cumprod")``,
``x.reshape(...)``, ``FUNCTIONS["linalg_solve"]``) counts. This over-approximates (a name in a
branch never taken counts too), which errs on the side of calling an op missing, not runnable.
"""
from __future__ import annotations

from types import CodeType, FunctionType
from typing import Any, Callable

_CACHE: dict[int, frozenset[str]] = {}

#: Names that Python code uses for its own methods (``dims.index(d)``, ``order.sort()``): read from
#: a code's names they say nothing; as string constants (``FUNCTIONS["index"]``) they still count.
_PYTHON_METHODS = frozenset({"index", "sort", "copy", "count"})


def inferred_uses(fn: Callable[..., Any], declared: Any) -> frozenset[str]:
    """The declared ops whose names ``fn``'s code mentions (see the module's docstring)."""
    key = id(fn)
    found = _CACHE.get(key)
    if found is None:
        names: set[str] = set()
        _scan(fn, names, set())
        found = frozenset(_op_name(n, declared) for n in names if _op_name(n, declared) is not None)
        _CACHE[key] = found
    return found


def _op_name(name: str, declared: Any) -> str | None:
    if name in declared:
        return name
    if name.endswith("_") and name[:-1] in declared:  # an in-place method: x.mul_(...)
        return name[:-1]
    return None


def _scan(fn: Any, names: set[str], seen: set[int]) -> None:
    fn = getattr(fn, "__wrapped__", fn)
    if not isinstance(fn, FunctionType) or id(fn) in seen:
        return
    seen.add(id(fn))
    package = (fn.__module__ or "").split(".")[0]
    for code in _codes(fn.__code__):
        names.update(n for n in code.co_names if n not in _PYTHON_METHODS)
        names.update(c for c in code.co_consts if isinstance(c, str) and c.isidentifier())
        for name in code.co_names:
            helper = fn.__globals__.get(name)
            if isinstance(helper, FunctionType) and (helper.__module__ or "").split(".")[0] == package:
                _scan(helper, names, seen)


def _codes(code: CodeType) -> list[CodeType]:
    out = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out += _codes(const)
    return out

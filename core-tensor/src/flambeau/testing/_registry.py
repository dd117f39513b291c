"""Where cases come from: the kit's own (core-tensor's ops) and those other packages contribute."""
from __future__ import annotations

import warnings
from importlib import metadata

from . import CASES_GROUP
from ._case import OpCase

_cache: dict[str, OpCase] | None = None
#: Contributions that failed to load: entry point name -> reason (reported by the coverage test).
load_failures: dict[str, str] = {}


def all_cases() -> dict[str, OpCase]:
    """Every case, by op name: the kit's own, then each ``flambeau.testing`` entry point's."""
    global _cache
    if _cache is not None:
        return _cache
    from .cases import core_cases

    found: dict[str, OpCase] = {c.op: c for c in core_cases()}
    for ep in metadata.entry_points().select(group=CASES_GROUP):
        try:
            contributed = list(ep.load()())
        except Exception as exc:  # noqa: BLE001 - a broken contribution is reported, not fatal
            load_failures[ep.name] = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"flambeau.testing: cases from entry point {ep.name!r} failed to load: {exc}", stacklevel=2)
            continue
        for case in contributed:
            if not isinstance(case, OpCase):
                load_failures[ep.name] = f"returned {type(case).__name__}, not OpCase"
                break
            found.setdefault(case.op, case)
    _cache = found
    return found

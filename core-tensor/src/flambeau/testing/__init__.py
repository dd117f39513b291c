"""flambeau's backend conformance kit: a pytest plugin that any backend runs against itself.

Run it with::

    pytest --pyargs flambeau.testing --flambeau-backend NAME

It checks every declared op (``flambeau.ops.declarations()``) against numpy references over
dtypes, shapes (0-d, empty, 1-d, n-d), non-contiguous inputs (transposed, step-sliced),
broadcasting, in-place forms and error cases; and the backend contract itself (allocation,
fill, host transfers, views sharing storage, devices).

A backend tunes the run with two optional attributes of its :class:`flambeau.plugins.Backend`:

- ``conformance_xfail``: a mapping from test keys to the reason: ``"erf:bfloat16"`` (one op, one
  dtype), ``"add"`` (every dtype of ``add``), ``"errors:add"`` (its error cases),
  ``"contract:views_share_storage"``, ``"*:bfloat16"`` (``fnmatch`` wildcards). Matching
  tests are marked ``xfail(strict=True)``: one that starts passing fails the run, so the list
  never outlives the bug.
- ``computes_data = False``: the backend computes shapes and dtypes only (like ``meta``); the
  kit then checks only result shapes, strides, dtypes, devices and errors (also forced with
  ``--flambeau-meta-only``).

Packages that declare ops of their own contribute cases for them through the entry-point
group ``flambeau.testing``: ``NAME = "module:function"``, the function returning
:class:`OpCase` objects. A declared op with no case fails the kit's coverage test.

Nothing heavy is imported here: the pytest plugin (the top-level module ``_flambeau_testing_plugin``) loads in every
pytest run of an environment that has flambeau installed.
"""
from __future__ import annotations

from typing import Any

__all__ = ["OpCase", "Sample", "ErrorCase", "Arg", "DEVICE", "all_cases", "CASES_GROUP"]

#: The entry-point group through which other packages contribute cases for the ops they declare.
CASES_GROUP = "flambeau.testing"


def __getattr__(name: str) -> Any:
    # Deferred so that loading the pytest plugin does not import the kit (or numpy work) eagerly.
    if name in ("OpCase", "Sample", "ErrorCase", "Arg", "DEVICE"):
        from . import _case

        return getattr(_case, name)
    if name == "all_cases":
        from ._registry import all_cases

        return all_cases
    raise AttributeError(f"module 'flambeau.testing' has no attribute {name!r}")

"""The op registry and dispatcher.

Packages declare ops (:class:`OpDecl`) and register kernels and gradients through the pluggy
hooks in :mod:`flambeau.plugins`. After loading, each backend's kernels are frozen into one
flat table; calling an op looks its kernel up there, with no hook call or registry search.

Kernel calling convention, for an op declared ``"(input: Tensor, other: TensorOrScalar, *, alpha=1)"``:

- compute and factory ops: ``kernel(input, other, alpha, out=out)`` where tensors are replaced by
  the backend's native arrays and ``out`` is a native array already allocated with the shape and
  dtype the meta function gave (a tuple of them for several outputs). The kernel fills ``out``;
  ``out`` may alias an input (in-place forms pass ``input`` itself).
- view ops: ``kernel(input, ...)`` returns a native view of ``input``.
- dynamic ops: ``kernel(input, ...)`` returns new native arrays.
"""
from __future__ import annotations

from typing import Any, Callable

from ..plugins._backend import CORE_API_VERSION
from ._decl import COMPUTE, DYNAMIC, FACTORY, VIEW, OpDecl
from ._dispatch import (enable_cpu_fallback, fallback_stats, get_default_device, is_strict, set_default_device,
                        set_strict)
from ._registry import FUNCTIONS, GRADIENTS, OPS, TABLES

__all__ = [
    "OpDecl", "COMPUTE", "VIEW", "DYNAMIC", "FACTORY", "fn", "function", "declarations", "gradients",
    "kernel_table", "manifest", "enable_cpu_fallback", "fallback_stats", "set_strict", "is_strict",
    "set_default_device", "get_default_device", "coverage",
]


class _Functions:
    """``flambeau.ops.fn.NAME``: the function of every declared op, whichever package declared it."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            fn = FUNCTIONS[name]
        except KeyError:
            raise AttributeError(_unknown_op_message(name)) from None
        setattr(self, name, fn)  # cached: later lookups are plain attribute reads
        return fn

    def __dir__(self) -> list[str]:
        return sorted(FUNCTIONS)


fn = _Functions()


def _unknown_op_message(name: str) -> str:
    from ..plugins._loader import plugin_records

    msg = f"no op named {name!r} is declared by any installed flambeau package"
    failed = [f"{r.name} ({r.distribution} {r.version}): {r.reason}" for r in plugin_records if r.status == "failed"]
    if failed:
        msg += "; plugins that failed to load, which may have declared it: " + "; ".join(failed)
    return msg


def function(name: str) -> Callable[..., Any]:
    """The function of op ``name``."""
    return getattr(fn, name)


def declarations() -> dict[str, OpDecl]:
    """Every declared op, by name (read-only view of the registry)."""
    return dict(OPS)


def gradients() -> dict[str, Callable[..., Any]]:
    """Every registered backward formula, by op name."""
    return dict(GRADIENTS)


def kernel_table(device_type: str) -> dict[str, Callable[..., Any]]:
    """A copy of the frozen kernel table of a backend (loading it if needed)."""
    return dict(TABLES[device_type])


def manifest() -> dict[str, Any]:
    """The primitive ops a backend must implement, with their signatures and the core API version."""
    primitives = {name: {"signature": d.signature, "kind": d.kind, "declared_by": d.provider}
                  for name, d in sorted(OPS.items()) if d.primitive}
    return {"core_api_version": CORE_API_VERSION, "primitive_ops": primitives}


def manifest_json() -> str:
    import json  # here, not at import: only `flambeau info`-like tools ask for it

    return json.dumps(manifest(), indent=2, sort_keys=True)


def coverage(device_type: str) -> dict[str, str]:
    """For each declared op, how a backend runs it: ``"kernel"``, ``"composite"`` or ``"missing"``."""
    table = TABLES[device_type]
    return {name: "kernel" if name in table else "composite" if d.composite is not None else "missing"
            for name, d in sorted(OPS.items())}

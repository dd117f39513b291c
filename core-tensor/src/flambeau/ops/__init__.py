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
from . import _registry
from ._registry import FUNCTIONS, GRADIENTS, OPS, TABLES

__all__ = [
    "OpDecl", "COMPUTE", "VIEW", "DYNAMIC", "FACTORY", "fn", "function", "declarations", "gradients",
    "kernel_table", "manifest", "enable_cpu_fallback", "fallback_stats", "set_strict", "is_strict",
    "set_default_device", "get_default_device", "coverage", "runnable_ops", "tiers",
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
    plugin_records = _registry.LOADER.plugin_records
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


def manifest(tier: str | None = None) -> dict[str, Any]:
    """The op manifest: the core API version, and every declared op with its signature, kind and
    tier (``"core"``, ``"decomposed"``, ``"host"`` or ``"extended"``: see :attr:`OpDecl.effective_tier`).

    Args:
        tier: only the ops of this tier (``"core"``: the set every backend implements).

    ``primitive_ops`` lists the ops with no composite at all (the core tier, and the extended ops
    that a backend needs a kernel of its own for).
    """
    if tier is not None and tier not in TIER_NAMES:
        raise ValueError(f"manifest(): tier must be one of {', '.join(TIER_NAMES)}, not {tier!r}")
    of = tiers()
    ops = {name: {"signature": d.signature, "kind": d.kind, "tier": of[name], "declared_by": d.provider}
           for name, d in sorted(OPS.items()) if tier is None or of[name] == tier}
    primitives = {name: {"signature": d.signature, "kind": d.kind, "declared_by": d.provider}
                  for name, d in sorted(OPS.items()) if d.primitive and (tier is None or of[name] == tier)}
    return {"core_api_version": CORE_API_VERSION, "tier": tier or "all", "ops": ops, "primitive_ops": primitives,
            "counts": {t: sum(1 for v in of.values() if v == t) for t in TIER_NAMES}}


def tiers() -> dict[str, str]:
    """Each declared op's tier: ``"core"``; ``"decomposed"`` (runs on a backend with only the
    core tier); ``"host"`` (likewise, through the host); ``"extended"`` (a backend with only the
    core tier cannot run it: no decomposition, or one that needs an extended op)."""
    core_only = _resolve_all({name: None for name, d in OPS.items() if d.tier == "core"})
    names = {"kernel": "core", "decomposition": "decomposed", "host": "host", "missing": "extended"}
    return {name: names[how] for name, how in core_only.items()}


#: The tiers of the manifest, from what a backend must implement to what it never needs to.
TIER_NAMES = ("core", "extended", "decomposed", "host")


def manifest_json(tier: str | None = None) -> str:
    import json  # here, not at import: only `flambeau info`-like tools ask for it

    return json.dumps(manifest(tier), indent=2, sort_keys=True)


#: How a backend runs an op, in ``coverage``: its own kernel; a decomposition that reaches its
#: kernels; one that goes through the host (numpy); or not at all.
HOW = ("kernel", "decomposition", "host", "missing")


def coverage(device_type: str) -> dict[str, str]:
    """For each declared op, how a backend runs it: ``"kernel"`` (its own), ``"decomposition"``
    (a composite whose ops all run there, recursively), ``"host"`` (such a composite that
    computes through the host) or ``"missing"``.

    A composite that does not declare the ops it uses (``OpDecl.uses`` is None) has them read
    from its code (``flambeau.ops._uses``).

    Example::

        >>> fb.ops.coverage("cpu")["add"]
        'kernel'
    """
    table = TABLES[device_type]
    return _resolve_all(table)


def runnable_ops(device_type: str) -> set[str]:
    """The ops that run on a backend, natively or by decomposition (``coverage`` not ``"missing"``)."""
    return {name for name, how in coverage(device_type).items() if how != "missing"}


def _resolve_all(table: Any) -> dict[str, str]:
    from ._uses import inferred_uses

    state: dict[str, str] = {}

    def how(name: str, stack: frozenset) -> str:
        known = state.get(name)
        if known is not None:
            return known
        d = OPS.get(name)
        if d is None:
            return "missing"
        if name in table:
            result = "kernel"
        elif d.composite is None or name in stack:
            result = "missing"
        else:
            uses = d.uses if d.uses is not None else inferred_uses(d.composite, OPS)
            inner = [how(u, stack | {name}) for u in uses if u != name]
            if "missing" in inner:
                result = "missing"
            else:
                result = "host" if d.host or "host" in inner else "decomposition"
        if not stack:  # a result found inside a cycle's search may depend on where it started
            state[name] = result
        return result

    return {name: how(name, frozenset()) for name in sorted(OPS)}

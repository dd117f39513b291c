"""Decompositions of core-tensor's ops onto the core tier (``_core_tier.CORE_OPS``).

Each one is the composite that the dispatcher runs on a backend with no kernel of its own for
the op (the CPU backend keeps its kernels; these never run there unless a kernel is switched
off). ``plugin.py`` attaches them to the declarations, with the ops each one calls (``uses``),
from which ``flambeau.ops.coverage`` tells per backend which ops run and how.

A decomposition receives the op's arguments positionally, in declaration order, after the op's
meta function has checked them; it returns a result of the shape and dtype that meta gives
(:func:`decomposition` casts a result whose dtype came out differently).
"""
from __future__ import annotations

from typing import Any, Callable

import importlib
import os

from ... import _dtypes
from ...ops._registry import FUNCTIONS, OPS

#: op name -> (composite, the ops it calls, whether it computes on the host)
DECOMPOSITIONS: dict[str, tuple[Callable[..., Any], tuple[str, ...], bool]] = {}

#: The modules that define decompositions, in registration order.
MODULES = ("blas", "factories", "host", "indexing", "pointwise", "random", "reductions", "shape", "special",
           "integer", "advanced_index", "compare", "counting", "scans", "search", "order", "host_fft", "host_linalg",
           "special_gamma", "special_normal", "special_bessel", "unique", "scatter_reduce", "floatbits", "sampling")


def decomposition(name: str, uses: tuple[str, ...] | str, *, host: bool = False,
                  cast: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the decomposition of op ``name``, calling the ops ``uses``.

    With ``cast``, a tensor result whose dtype differs from the one the op's meta function gives
    is cast to it (formulas compute in the promoted dtype; a result may need e.g. bool or int64).
    """
    used = tuple(uses.split()) if isinstance(uses, str) else tuple(uses)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in DECOMPOSITIONS:
            raise ValueError(f"op {name!r} has two decompositions")
        composite = _casting(name, fn) if cast else fn
        composite.__name__ = composite.__qualname__ = f"{name}_decomposition"
        composite.__doc__ = fn.__doc__
        composite.__wrapped_decomposition__ = fn  # type: ignore[attr-defined]
        DECOMPOSITIONS[name] = (composite, used + (("to_dtype",) if cast else ()), host)
        return fn
    return register


def _casting(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def composite(*args: Any) -> Any:
        result = fn(*args)
        if isinstance(result, tuple):  # several outputs: the op's named tuple, as its kernel path gives
            from ...ops._dispatch import _named

            result = _named(OPS[name], tuple(result))
        spec = OPS[name].meta(*args)
        if type(spec) is tuple and len(spec) == 2 and isinstance(spec[1], _dtypes.dtype):
            return _cast(result, spec[1])
        if isinstance(result, tuple) and isinstance(spec, (list, tuple)) and len(spec) == len(result):
            cast = tuple(_cast(r, s[1]) for r, s in zip(result, spec))
            return type(result)(*cast) if hasattr(result, "_fields") else cast
        return result
    return composite


def _cast(result: Any, dt: Any) -> Any:
    if getattr(result, "_dtype", dt) is not dt:
        return result.to(dt)
    return result


# -- loaded at first use ----------------------------------------------------------------------
# ``import flambeau`` imports none of the modules above (~17 modules, ~5% of the import): the CPU
# backend has a kernel for every op they decompose, so a CPU program never calls one. The core
# plugin attaches a :class:`DeferredDecomposition` per op instead, with the ops it calls and where
# it computes read from the generated index ``_index.DECOMPOSED`` (regenerate it with
# ``python -m flambeau.ops._write_templates``; ``test_decomp_deferred.py`` checks it is current).


class DeferredDecomposition:
    """Stands for the decomposition of op ``name`` until its module is imported.

    Its first call imports the module, then puts the real composites of that module's ops in place
    of their stand-ins: on the declarations (``OpDecl.composite``, which the dispatcher calls) and
    in the namespaces of the op functions (their ``_composite``), so that later calls meet no
    stand-in.
    """

    __slots__ = ("name", "module")

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        self.module = module

    def resolve(self) -> Callable[..., Any]:
        """The real composite (importing its module, and replacing every stand-in of that module)."""
        importlib.import_module(f"{__name__}.{self.module}")
        from ._index import DECOMPOSED

        for name, (module, _, _) in DECOMPOSED.items():
            if module != self.module:
                continue
            decl = OPS.get(name)
            stand_in = None if decl is None else decl.composite
            if type(stand_in) is not DeferredDecomposition:
                continue
            real = decl.composite = DECOMPOSITIONS[name][0]
            for fname in (name, name + "_"):
                namespace = getattr(FUNCTIONS.get(fname), "__globals__", None)
                if namespace is not None and namespace.get("_composite") is stand_in:
                    namespace["_composite"] = real
        return DECOMPOSITIONS[self.name][0]

    def __call__(self, *args: Any) -> Any:
        return self.resolve()(*args)

    def __repr__(self) -> str:
        return f"DeferredDecomposition({self.name!r}, module={self.module!r})"


def deferred(name: str) -> tuple[Callable[..., Any], tuple[str, ...], bool] | None:
    """What ``DECOMPOSITIONS[name]`` will hold, its composite a stand-in; None if ``name`` has none."""
    try:
        from ._index import DECOMPOSED
    except ImportError:  # a source tree mid-regeneration: the modules load now, correctly, more slowly
        return all_decompositions().get(name)

    found = DECOMPOSED.get(name)
    if found is None:
        return None
    module, uses, host = found
    return DeferredDecomposition(name, module), uses, host


def all_decompositions() -> dict[str, tuple[Callable[..., Any], tuple[str, ...], bool]]:
    """Every decomposition, each module imported (what the index is generated from)."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return DECOMPOSITIONS


def index_source() -> str:
    """The text of ``_index.py`` for the decompositions the modules define now (each op's module is
    the one its function was written in: importing that module registers it)."""
    lines = ['"""Generated by ``python -m flambeau.ops._write_templates``: do not edit. Which module defines each',
             "op's decomposition, the ops it calls and whether it computes on the host, so that",
             '``import flambeau`` imports none of them."""', "# ruff: noqa: E501", "", "DECOMPOSED = {"]
    for name, (composite, uses, host) in sorted(all_decompositions().items()):
        module = composite.__wrapped_decomposition__.__module__.rpartition(".")[2]
        lines.append(f"    {name!r}: ({module!r}, {uses!r}, {host!r}),")
    lines += ["}", ""]
    return "\n".join(lines)


def index_path() -> str:
    """Where the index is (``python -m flambeau.ops._write_templates`` rewrites it)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_index.py")

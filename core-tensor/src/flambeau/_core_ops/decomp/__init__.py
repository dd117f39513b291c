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

from ... import _dtypes
from ...ops._registry import OPS

#: op name -> (composite, the ops it calls, whether it computes on the host)
DECOMPOSITIONS: dict[str, tuple[Callable[..., Any], tuple[str, ...], bool]] = {}


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

"""flambeau.nn: modules, layers, functional ops, losses and initialisation (torch.nn's API).

Install ``flambeau-nn``. Layers are ``Module`` s built on the functional forms in
:mod:`flambeau.nn.functional`, which call ops that this package declares through flambeau's op hooks
(so every backend runs them, and a backend may register faster kernels for them).

The public names load on first use (PEP 562): ``import flambeau`` imports this package to load its
op plugin (``flambeau.nn._ops.plugin``) before the op registry exists, and the functional forms bind
their ops when they are imported, so they can only be imported once the registry is complete.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__

#: Submodules reachable as attributes (``flambeau.nn.functional``).
_SUBMODULES = ("functional", "init", "parameter", "utils", "modules", "parallel")


def _public() -> dict[str, Any]:
    """The names ``flambeau.nn`` exports: every layer, the parameter classes and the submodules."""
    from . import functional, init, modules, parameter, utils  # noqa: F401

    import types

    # every family file of ``modules`` lists its layers in ``__all__``; ``modules`` star-imports them all
    families = [m for m in vars(modules).values() if isinstance(m, types.ModuleType) and hasattr(m, "__all__")]
    names = {name: getattr(modules, name) for family in families for name in family.__all__
             if hasattr(modules, name)}
    for name in ("Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"):
        names[name] = getattr(parameter, name)
    names.update(functional=functional, init=init, parameter=parameter, utils=utils, modules=modules)
    from .parallel import DataParallel  # torch.nn.DataParallel

    names["DataParallel"] = DataParallel
    return names


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    public = _public()
    if name == "__all__":
        value: Any = sorted(n for n in public if n not in _SUBMODULES)
        globals()["__all__"] = value
        return value
    globals().update(public)
    if name in public:
        return public[name]
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_public()))

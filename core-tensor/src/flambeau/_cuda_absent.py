"""``fb.cuda`` when flambeau-backend-cuda is not installed.

PyTorch's CPU builds still have ``torch.cuda``, and device-agnostic code starts with
``device = "cuda" if torch.cuda.is_available() else "cpu"``. So ``fb.cuda`` always resolves: to the
real ``flambeau.cuda`` when its distribution is installed, else to the stand-in made here, whose
:func:`is_available` is False and :func:`device_count` 0, whose seeding and cache functions do
nothing (as PyTorch defers them until CUDA starts), and whose other functions raise PyTorch's
``AssertionError`` naming the distribution to install. ``import flambeau.cuda`` itself still raises
ModuleNotFoundError naming the distribution (:mod:`flambeau._missing`): the stand-in is never put in
``sys.modules``.
"""
from __future__ import annotations

import importlib
import types
from typing import Any, Callable, NoReturn

DISTRIBUTION = "flambeau-backend-cuda"
REASON = (f"flambeau has no CUDA support: {DISTRIBUTION} is not installed; install it for your CUDA version "
          f"with `pip install '{DISTRIBUTION}[cuda12]'` (CUDA 12) or `pip install '{DISTRIBUTION}[cuda13]'` (CUDA 13)")

#: The real module's functions that need a device (torch.cuda raises for each on a CPU build).
_NEED_A_DEVICE = ("current_device", "set_device", "device", "get_device_name", "get_device_capability",
                  "get_device_properties", "synchronize", "Stream", "Event", "current_stream", "default_stream",
                  "stream", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                  "reset_peak_memory_stats", "mem_get_info", "init", "initial_seed")
#: Those that do nothing until CUDA starts (and so nothing at all without it).
_DEFERRED = ("manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache")


def _unavailable(name: str) -> Callable[..., NoReturn]:
    def call(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(REASON)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Raises AssertionError: {DISTRIBUTION} is not installed."
    return call


def _nothing(name: str) -> Callable[..., None]:
    def call(*args: Any, **kwargs: Any) -> None:
        return None

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Does nothing: {DISTRIBUTION} is not installed, so there is no CUDA generator or cache."
    return call


def stand_in() -> types.ModuleType:
    """The ``fb.cuda`` of an install without flambeau-backend-cuda (see the module's docstring)."""
    module = types.ModuleType("flambeau.cuda", f"flambeau.cuda stand-in: {REASON}.")
    module.is_available = lambda: False  # type: ignore[attr-defined]
    module.is_initialized = lambda: False  # type: ignore[attr-defined]
    module.device_count = lambda: 0  # type: ignore[attr-defined]
    for name in _NEED_A_DEVICE:
        setattr(module, name, _unavailable(name))
    for name in _DEFERRED:
        setattr(module, name, _nothing(name))
    return module


def resolve() -> types.ModuleType:
    """``flambeau.cuda`` if its distribution is installed, else :func:`stand_in`."""
    try:
        return importlib.import_module("flambeau.cuda")
    except ModuleNotFoundError as exc:
        if DISTRIBUTION not in str(exc):  # the package is there but something it imports is not
            raise
        return stand_in()

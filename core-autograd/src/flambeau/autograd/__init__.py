"""``flambeau.autograd``: reverse-mode automatic differentiation (flambeau-core-autograd).

Loading this package (through the ``flambeau`` plugin entry point) fills the dispatcher's
recording slot: every op whose inputs require grad records a node, and ``Tensor.backward``
runs the graph. The semantics are PyTorch's ("Autograd mechanics").
"""
from __future__ import annotations

from . import graph
from ._api import backward, grad
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .formula import Formula, formula
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "gradcheck", "gradgradcheck",
    "GradcheckError", "functional", "graph", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
    "is_grad_enabled", "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "Formula", "formula",
]


#: Loaded at first use, not by ``import flambeau`` (which loads this package as its autograd
#: plugin): whole-function derivatives are a tool a program may never call, and custom Functions
#: (``Function``, ``FunctionCtx``, ``once_differentiable``: their module was ~2% of the import)
#: appear only in programs that define one. (``gradcheck`` stays eager: its function shadows its
#: module, which a first ``import flambeau.autograd.gradcheck`` would otherwise leave in its place.)
_LAZY = {"functional": None, "Function": "function", "FunctionCtx": "function", "once_differentiable": "function"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # not `from . import`: its hasattr check would call this function again

    module_name = _LAZY[name]
    if module_name is None:
        return importlib.import_module(f"{__name__}.{name}")
    value = getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

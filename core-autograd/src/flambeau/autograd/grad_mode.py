"""Grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``).

The modes and their thread-local state belong to core-tensor (``flambeau._grad_mode``), so that
they work without this package; autograd reads that same ``STATE``. Anomaly detection is
autograd's own.
"""
from __future__ import annotations

from flambeau._grad_mode import (STATE, _DecoratorContextManager, enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "STATE", "ANOMALY", "_DecoratorContextManager"]

#: Anomaly detection is process-wide, as in PyTorch: ``[enabled, check_nan]`` (a list, so that
#: the recording path reads it without an attribute lookup).
ANOMALY = [False, True]

"""The pluggy hooks through which every package (core-tensor's own ops included) adds ops."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import pluggy

PROJECT = "flambeau"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class FlambeauSpec:
    """Hook specifications. All of them are called once, at load time, never per op."""

    @hookspec
    def flambeau_declare_ops(self) -> Iterable[Any]:
        """Return the ``flambeau.ops.OpDecl`` s this package provides."""

    @hookspec
    def flambeau_register_kernels(self) -> Mapping[tuple[str, str], Callable[..., Any]]:
        """Return kernels keyed by ``(backend name, op name)``.

        A kernel for an op that no installed package declares is ignored; one whose
        parameters do not match the op's declaration is refused with a warning.
        """

    @hookspec
    def flambeau_register_gradients(self) -> Mapping[str, Callable[..., Any]]:
        """Return backward formulas keyed by op name (device-independent, written with flambeau ops)."""

    @hookspec(firstresult=True)
    def flambeau_autograd_engine(self) -> Any:
        """Return the autograd engine that fills the dispatcher's recording slot.

        The dispatcher calls ``record(op_decl, args, outputs, mode, pre)`` when an input requires grad
        (``mode`` is ``"functional"``, ``"view"``, ``"inplace"`` or ``"out"``),
        ``before_write(op_decl, args, outs, mode)`` before an in-place or ``out=`` kernel writes,
        ``set_requires_grad(tensor, flag)``, ``backward(tensor, gradient, retain_graph, create_graph,
        inputs)``, ``record_device_copy(src, dst)``, and ``install()`` once, after loading.
        """

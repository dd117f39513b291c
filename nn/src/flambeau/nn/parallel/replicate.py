"""Copies of a module on several devices whose parameters stay in the autograd graph (replicate)."""
from __future__ import annotations

from typing import Any, Sequence

from ..modules.module import Module
from ._devices import device_of

__all__ = ["replicate"]


def _shallow_copy(module: Module) -> Module:
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = dict(module._parameters)
    replica._buffers = dict(module._buffers)
    replica._modules = dict(module._modules)
    return replica


def replicate(network: Module, devices: Sequence[Any], detach: bool = False) -> list[Module]:
    r"""One copy of ``network`` per device, with parameters and buffers moved there.

    The copies' parameters are differentiable copies of the originals (``detach=False``), so a
    backward pass through any replica accumulates into ``network``'s own ``.grad``; on the
    original's device a replica uses the original tensors themselves (``detach=True``: detached
    aliases of them).

    Args:
        network (Module): the module to copy.
        devices: the target devices (indices on the accelerator, strings or devices).
        detach (bool): detach the copies from the graph (default ``False``).
    """
    if not isinstance(network, Module):
        raise TypeError(f"replicate expects a Module, got {type(network).__name__}")
    targets = [device_of(d) for d in devices]
    modules = list(network.modules())
    replicas = []
    for dev in targets:
        copies = {id(m): _shallow_copy(m) for m in modules}
        for m in modules:
            r = copies[id(m)]
            for key, child in m._modules.items():
                r._modules[key] = None if child is None else copies[id(child)]
            for key, p in m._parameters.items():
                if p is None:
                    continue
                moved = p.to(dev)
                r._parameters[key] = moved.detach() if detach else moved
            for key, b in m._buffers.items():
                r._buffers[key] = None if b is None else b.to(dev)
        replicas.append(copies[id(network)])
    return replicas

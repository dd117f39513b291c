"""DataParallel: one module run on slices of each batch, one slice per accelerator device."""
from __future__ import annotations

from itertools import chain
from typing import Any, Sequence

from ..modules.module import Module
from ._devices import accelerator, device_index
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _resolve(device_ids: Sequence[Any] | None, output_device: Any, acc: tuple[str, int]) -> tuple[list[int], int]:
    device_type, count = acc
    if device_ids is None:
        device_ids = list(range(count))
    ids = [device_index(d, device_type, count) for d in device_ids]
    if not ids:
        raise RuntimeError("no available devices were found")
    if output_device is None:
        output_device = ids[0]
    out = -1 if isinstance(output_device, int) and output_device < 0 else device_index(output_device, device_type,
                                                                                      count)
    return ids, out


class DataParallel(Module):
    r"""Run ``module`` on slices of each input batch, one slice per accelerator device.

    The batch is split along ``dim`` across ``device_ids``, the module is replicated on each device
    and run on its slice concurrently, and the outputs are concatenated on ``output_device``.
    Gradients from every replica accumulate into ``module``'s own parameters.

    Without an accelerator (flambeau-backend-cuda with at least one GPU), as PyTorch without GPUs,
    the module is simply run on the inputs and ``device_ids`` are ignored; with one device the
    module is moved there and run on it. Prefer :class:`~flambeau.nn.parallel.DistributedDataParallel`
    for training on several devices or machines.

    The wrapped module is the ``module`` attribute, so the state dict's keys start with ``module.``.

    Args:
        module (Module): the module to parallelize.
        device_ids (list of int or device): the devices to use (default: all of the accelerator's).
        output_device (int or device): where the outputs are gathered (default ``device_ids[0]``).
        dim (int): the dimension the inputs are split along (default 0).

    Example::

        >>> net = flambeau.nn.DataParallel(model)
        >>> output = net(input_var)  # input_var can be on any device, including CPU
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel expects a Module, got {type(module).__name__}")
        acc = accelerator()
        self.module = module
        self.dim = dim
        if acc is None:
            self.device_ids: list[int] = []
            self.output_device: Any = None
            self.src_device_obj = None
            return
        import flambeau

        ids, out = _resolve(device_ids, output_device, acc)  # checked before anything moves
        self.device_ids = ids
        self.output_device = out
        self.src_device_obj = flambeau.device(acc[0], ids[0])
        if len(ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of them on device: {t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:  # a module called with no arguments still runs once
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids: Sequence[int]) -> list[Module]:
        return replicate(module, device_ids, not self.training)

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids: Sequence[int]) -> tuple:
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas: Sequence[Module], inputs: Sequence[Any], kwargs: Sequence[dict]) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs: list, output_device: Any) -> Any:
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: dict | None = None) -> Any:
    r"""The functional form of :class:`DataParallel`: evaluate ``module(*inputs)`` across devices.

    Without an accelerator the module is run directly on ``inputs`` (PyTorch raises there; flambeau
    accepts the single-device case, as :class:`DataParallel` does).

    Args:
        module (Module): the module to evaluate.
        inputs: the inputs (a tuple of positional arguments, or one argument).
        device_ids (list of int or device): the devices (default: all of the accelerator's).
        output_device (int or device): where the outputs are gathered (default ``device_ids[0]``).
        dim (int): the dimension the inputs are split along (default 0).
        module_kwargs (dict, optional): keyword arguments for the module.
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    acc = accelerator()
    if acc is None:
        return module(*inputs, **(module_kwargs or {}))
    import flambeau

    ids, out = _resolve(device_ids, output_device, acc)
    src = flambeau.device(acc[0], ids[0])
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{src} (device_ids[0]) but found one of them on device: {t.device}")
    scattered, kwargs = scatter_kwargs(inputs, module_kwargs, ids, dim)
    if not scattered and not kwargs:
        scattered, kwargs = ((),), ({},)
    if len(ids) == 1:
        return module(*scattered[0], **kwargs[0])
    used = ids[: len(scattered)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, scattered, kwargs, used)
    return gather(outputs, out, dim)

"""Splitting inputs across devices and joining outputs back (torch.nn.parallel's scatter/gather)."""
from __future__ import annotations

from typing import Any, Sequence

import flambeau
from flambeau import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device(d: Any) -> flambeau.device:
    """A device from an int (an index on the accelerator, -1 the CPU), a string or a device."""
    from ._devices import device_of

    return device_of(d)


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs: Any, target_gpus: Sequence[Any], dim: int = 0) -> list:
    r"""Slice ``inputs`` into one chunk per device along ``dim``, recursing into tuples, lists and dicts.

    Tensors are split with :meth:`~flambeau.Tensor.chunk` (so there may be fewer chunks than
    devices) and each chunk is moved to its device, differentiably; other objects are repeated.

    Args:
        inputs: a tensor, or a structure of tensors and other objects.
        target_gpus: the devices (indices on the accelerator, strings or devices).
        dim (int): the dimension to split along (default 0).
    """
    devices = [_device(d) for d in target_gpus]

    def scatter_map(obj: Any) -> list:
        if isinstance(obj, Tensor):
            return [chunk.to(dev) for chunk, dev in zip(obj.chunk(len(devices), dim), devices)]
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus: Sequence[Any], dim: int = 0) -> tuple:
    r""":func:`scatter` for positional and keyword arguments, padded to the same number of chunks."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device: Any, dim: int = 0) -> Any:
    r"""Concatenate the per-device ``outputs`` along ``dim`` on ``target_device`` (-1: the CPU).

    Tensors are moved and concatenated differentiably; tuples, lists, namedtuples and dicts are
    gathered element by element, ``None`` stays ``None``.
    """
    target = _device(target_device)

    def gather_map(outputs: list) -> Any:
        out = outputs[0]
        if isinstance(out, Tensor):
            if dim == 0 and all(o.dim() == 0 for o in outputs):  # scalars (a loss per replica): stack them
                return flambeau.stack([o.to(target) for o in outputs])
            return flambeau.cat([o.to(target) for o in outputs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))

    return gather_map(outputs)

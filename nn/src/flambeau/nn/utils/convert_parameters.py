"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from typing import Any, Iterable

import flambeau
from flambeau import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param: Tensor, device: Any) -> Any:
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    r"""All ``parameters`` flattened and concatenated into one vector (a new tensor, in the graph)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_same_device(param, device)
        vec.append(param.reshape(-1))
    return flambeau.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    r"""Copy consecutive slices of the vector ``vec`` into ``parameters`` (the reverse of
    :func:`parameters_to_vector`); each parameter's data becomes a view of ``vec``."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements (the parameters' "
                           f"total), got shape {tuple(vec.shape)}")
    device = None
    pointer = 0
    for param in params:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n

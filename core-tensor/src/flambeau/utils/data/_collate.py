"""Batching of samples: :func:`default_collate` (auto-batching) and :func:`default_convert` (``batch_size=None``)."""
from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

__all__ = ["default_collate", "default_convert"]

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_CONVERT_ERR = "default_convert: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _numpy_unsupported(arr: np.ndarray) -> bool:
    # strings, bytes and objects have no tensor dtype
    return arr.dtype.kind in "SaUO"


def default_convert(data: Any) -> Any:
    r"""Turn numpy arrays (and numpy scalars) inside ``data`` into tensors, keeping the structure.

    What a DataLoader applies to each sample when automatic batching is off (``batch_size=None``).
    """
    import flambeau

    if isinstance(data, flambeau.Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _numpy_unsupported(data):
            return data
        return flambeau.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return flambeau.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        items = [default_convert(d) for d in data]
        try:
            return type(data)(items)  # type: ignore[call-arg]
        except TypeError:
            return items
    return data


def default_collate(batch: list) -> Any:
    r"""Merge a list of samples into a batch, recursively by the type of the first sample.

    - tensors are stacked along a new dimension 0;
    - numpy arrays become tensors, then are stacked; numpy scalars become a 1-D tensor;
    - Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor;
    - strings and bytes are left as a list;
    - mappings are collated per key, namedtuples per field, other sequences per position
      (tuples come back as lists, as PyTorch's do); every sequence must have the same length.

    Example::

        >>> default_collate([(0, "a"), (1, "b")])
        [tensor([0, 1]), ('a', 'b')]
    """
    import flambeau

    elem = batch[0]
    if isinstance(elem, flambeau.Tensor):
        return flambeau.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _numpy_unsupported(elem):
            raise TypeError(_ERR.format(elem.dtype))
        if elem.shape == ():
            return flambeau.as_tensor(np.asarray(batch))
        return flambeau.stack([flambeau.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return flambeau.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return flambeau.tensor(batch, dtype=flambeau.bool)
    if isinstance(elem, float):
        return flambeau.tensor(batch, dtype=flambeau.float64)
    if isinstance(elem, int):
        return flambeau.tensor(batch, dtype=flambeau.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)  # type: ignore[call-arg]
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))

"""Small helpers the decompositions share."""
from __future__ import annotations

import math
from typing import Any

from ... import _dtypes
from ..._tensor import Tensor
from ...ops._registry import FUNCTIONS, OPS

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def op(name: str) -> Any:
    """The public function of op ``name`` (looked up at call time: declarations load in any order)."""
    return FUNCTIONS[name]


def result_dtype(name: str, *args: Any) -> Any:
    """The dtype op ``name``'s meta function gives for ``args`` (its only or first output)."""
    spec = OPS[name].meta(*args)
    return spec[1] if isinstance(spec[1], _dtypes.dtype) else spec[0][1]


def as_dtype(x: Any, dt: Any) -> Any:
    """``x`` in dtype ``dt`` (a tensor cast when needed; a Python number as it is)."""
    if isinstance(x, Tensor) and x._dtype is not dt:
        return op("to_dtype")(x, dt)
    return x


def scalar_like(value: Any, like: Tensor, dt: Any = None) -> Tensor:
    """A 0-d tensor holding ``value`` on ``like``'s device (``dt``, else ``like``'s dtype)."""
    from ..._creation import full

    return full((), value, dtype=dt or like._dtype, device=like._device)


def is_complex(x: Any) -> bool:
    return isinstance(x, Tensor) and x._dtype.is_complex


def reduced_dims(x: Tensor, dim: Any) -> tuple[int, ...]:
    """The dims a reduction's ``dim`` argument names, wrapped (all of them for None or ``()``)."""
    from ...ops.meta import wrap_dims

    ndim = x._data.ndim
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return wrap_dims(dim, max(ndim, 1)) if ndim else ()


def count(x: Tensor, dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= x._data.shape[d]
    return n

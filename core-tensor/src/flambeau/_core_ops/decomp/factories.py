"""Factories onto ``arange`` and elementwise ops."""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import op, result_dtype


def _float64_arange(n: int, device: Any) -> Tensor:
    from ... import _dtypes

    return op("arange")(0, n, 1, dtype=_dtypes.float64, device=device)


@decomposition("eye", "arange unsqueeze eq to_dtype")
def _eye(n: int, m: Any = None, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    m = n if m is None else m
    rows = op("arange")(0, n, 1, device=device).unsqueeze(1)
    cols = op("arange")(0, m, 1, device=device).unsqueeze(0)
    return rows == cols


@decomposition("linspace", "arange mul add sub where lt to_dtype")
def _linspace(start: Any, end: Any, steps: int, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    start, end = _number(start), _number(end)
    dt = result_dtype("linspace", start, end, steps, dtype, device, requires_grad)
    if dt.is_complex:  # complex ends: the same formula on each part
        i = _float64_arange(steps, device).to(dt)
    else:
        i = _float64_arange(steps, device)
    if steps == 1:
        return i * 0 + start
    step = (end - start) / (steps - 1)
    # PyTorch's two halves: from the start up to the middle, from the end after it (exact ends)
    return op("where")(i < steps // 2, i * step + start, end - (steps - 1 - i) * step)


def _number(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


@decomposition("logspace", "linspace pow to_dtype")
def _logspace(start: Any, end: Any, steps: int, base: float = 10.0, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    from ... import _dtypes
    from ..._creation import full

    exponent = op("linspace")(_number(start), _number(end), steps, dtype=_dtypes.float64, device=device)
    return op("pow")(full((), float(base), dtype=_dtypes.float64, device=exponent._device), exponent)


@decomposition("range", "arange mul add to_dtype")
def _range(start: Any, end: Any, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    n = int(math.floor((end - start) / step)) + 1
    return _float64_arange(max(n, 0), device) * step + start


@decomposition("fft_fftfreq", "arange sub where ge div to_dtype")
def _fftfreq(n: int, d: float = 1.0, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    i = _float64_arange(n, device)
    k = op("where")(i >= (n + 1) // 2, i - n, i)  # 0, 1, ..., -(n // 2), ..., -1
    return k / (d * n)


@decomposition("fft_rfftfreq", "arange div to_dtype")
def _rfftfreq(n: int, d: float = 1.0, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _float64_arange(n // 2 + 1, device) / (d * n)


def _triangle_indices(name: str, row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any) -> Tensor:
    r = op("arange")(0, row, 1, device=device).unsqueeze(1)
    c = op("arange")(0, col, 1, device=device).unsqueeze(0)
    keep = (c - r) <= offset if lower else (c - r) >= offset
    found = op("nonzero")(keep)  # row-major order: row by row, as PyTorch lists them
    return found.t()


@decomposition("tril_indices", "arange unsqueeze sub le nonzero t to_dtype")
def _tril_indices(row: int, col: int, offset: int = 0, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return _triangle_indices("tril_indices", row, col, offset, True, dtype, device)


@decomposition("triu_indices", "arange unsqueeze sub ge nonzero t to_dtype")
def _triu_indices(row: int, col: int, offset: int = 0, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return _triangle_indices("triu_indices", row, col, offset, False, dtype, device)

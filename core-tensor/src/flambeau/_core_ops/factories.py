"""Declarations of factory ops (no tensor inputs) and of copies: arange, linspace, eye, clone, casts."""
from __future__ import annotations

import math
from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import FACTORY, OpDecl
from ..ops.meta import broadcast_shapes, checked_scalar, fmt_shape

FACTORY_KW = "*, dtype=None, device=None, requires_grad=False"


def _number(value: Any, name: str) -> Any:
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, (int, float)):
        position = {"start": 1, "end": 2, "step": 3}[name]
        raise TypeError(f"arange(): argument '{name}' (position {position}) must be Number, not {type(value).__name__}")
    return value


def arange_length(start: Any, end: Any, step: Any) -> int:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    length = max(0, math.ceil((end - start) / step))
    if length >= 2 ** 63:
        raise RuntimeError("invalid size, possible overflow?")
    return length


def _arange_meta(start: Any, end: Any, step: Any = 1, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> tuple:
    start, end, step = _number(start, "start"), _number(end, "end"), _number(step, "step")
    if dtype is None:
        dtype = _dtypes.get_default_dtype() if any(isinstance(v, float) for v in (start, end, step)) else _dtypes.int64
    elif dtype is _dtypes.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    return (arange_length(start, end, step),), dtype


def _linspace_meta(start: Any, end: Any, steps: int, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> tuple:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return (steps,), dtype or _dtypes.get_default_dtype()


def _logspace_meta(start: Any, end: Any, steps: int, base: float = 10.0, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> tuple:
    return _linspace_meta(start, end, steps, dtype=dtype)


def _eye_meta(n: int, m: Any = None, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> tuple:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return (n, n if m is None else m), dtype or _dtypes.get_default_dtype()


def _clone_meta(input: Tensor, memory_format: Any = None) -> tuple:
    return input._data.shape, input._dtype


def _copy_meta(input: Tensor, src: Any) -> tuple:
    if not isinstance(src, Tensor):  # a number (tensor[i] = 1000) must fit an integer dtype, as in PyTorch
        checked_scalar(src, input._dtype)
    else:
        if broadcast_shapes(input._data.shape, src._data.shape) != tuple(input._data.shape):
            raise RuntimeError(
                f"output with shape {fmt_shape(input._data.shape)} doesn't match the broadcast shape "
                f"{fmt_shape(broadcast_shapes(input._data.shape, src._data.shape))}"
            )
    return input._data.shape, input._dtype


def _fill_meta(input: Tensor, value: Any) -> tuple:
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions."
        )
    checked_scalar(value, input._dtype)  # a fill value must fit an integer dtype, as in PyTorch
    return input._data.shape, input._dtype


def _to_dtype_meta(input: Tensor, dtype: Any) -> tuple:
    if not isinstance(dtype, _dtypes.dtype):
        raise TypeError(f"to(): dtype must be a flambeau.dtype, not {type(dtype).__name__}")
    return input._data.shape, dtype


def declarations() -> list[OpDecl]:
    return [
        OpDecl("arange", f"(start, end, step=1, {FACTORY_KW})", _arange_meta, kind=FACTORY, method=False,
               export=False, differentiable=False, doc="Values from ``start`` to ``end`` (excluded), ``step`` apart."),
        OpDecl("linspace", f"(start, end, steps, {FACTORY_KW})", _linspace_meta, kind=FACTORY, method=False,
               differentiable=False, doc="``steps`` evenly spaced values from ``start`` to ``end`` inclusive."),
        OpDecl("logspace", f"(start, end, steps, base=10.0, {FACTORY_KW})", _logspace_meta, kind=FACTORY,
               method=False, differentiable=False, doc="``base ** linspace(start, end, steps)``."),
        OpDecl("eye", f"(n, m=None, {FACTORY_KW})", _eye_meta, kind=FACTORY, method=False, differentiable=False,
               doc="A 2-D tensor with ones on the diagonal and zeros elsewhere."),
        OpDecl("clone", "(input: Tensor, *, memory_format=None)", _clone_meta, doc="A copy with its own storage."),
        OpDecl("copy", "(input: Tensor, src: TensorOrScalar)", _copy_meta, method=False, export=False, inplace=True,
               doc="Copies ``src`` (broadcast, and cast to this dtype) into ``input``."),
        OpDecl("fill", "(input: Tensor, value: TensorOrScalar)", _fill_meta, method=False, export=False,
               inplace=True, doc="Sets every element to ``value``."),
        OpDecl("to_dtype", "(input: Tensor, dtype)", _to_dtype_meta, method=False, export=False,
               elementwise=True, doc="A copy cast to ``dtype`` (laid out as ``input``, as PyTorch's ``to``)."),
    ]

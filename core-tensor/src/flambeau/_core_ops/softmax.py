"""Declarations of softmax and log_softmax (PyTorch keeps both in its tensor namespace) and of their
backward ops, ``_softmax_backward_data`` and ``_log_softmax_backward_data``.

The backward ops exist so that a backend can fuse each gradient into one pass over a row (the CPU
backend does); their composites, written with flambeau ops, run everywhere else and differentiate
again (core-autograd registers formulas for the backward ops too, for double backward).
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import type_name, wrap_dim

_HALF = ("float16", "bfloat16")


def _out_dtype(name: str, input: Tensor, dtype: Any) -> _dtypes.dtype:
    out = input._dtype if dtype is None else dtype
    if not isinstance(out, _dtypes.dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be flambeau.dtype, not {type(dtype).__name__}")
    if out._category != _dtypes._FLOAT:
        kind = "softmax_lastdim_kernel_impl" if name == "softmax" else "log_softmax_lastdim_kernel_impl"
        raise RuntimeError(f'"{kind}" not implemented for \'{type_name(out)}\'')
    return out


def _softmax_meta(name: str):
    def meta(input: Tensor, dim: Any, dtype: Any = None) -> tuple:
        if dim is None:
            raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
        wrap_dim(dim, input._data.ndim)
        return input._data.shape, _out_dtype(name, input, dtype)
    return meta


def _backward_meta(name: str):
    def meta(grad_output: Tensor, output: Tensor, dim: Any) -> tuple:
        if tuple(grad_output._data.shape) != tuple(output._data.shape):
            raise RuntimeError(f"{name}(): grad_output of shape {list(grad_output._data.shape)} does not match "
                               f"output of shape {list(output._data.shape)}")
        if grad_output._dtype is not output._dtype:
            raise RuntimeError(f"{name}(): expected grad_output and output to have the same dtype, but got "
                               f"{type_name(grad_output._dtype)} and {type_name(output._dtype)}")
        if output._dtype._category != _dtypes._FLOAT:
            raise RuntimeError(f'"{name}" not implemented for \'{type_name(output._dtype)}\'')
        wrap_dim(dim, output._data.ndim)
        return output._data.shape, output._dtype
    return meta


def _working(input: Tensor, dtype: Any) -> tuple[Tensor, Any]:
    """The input in the dtype the composite computes in (half precision: float32), and the output dtype."""
    out = input.dtype if dtype is None else dtype
    work = _dtypes.float32 if out.name in _HALF else out
    return (input if input.dtype is work else input.to(work)), out


def _softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    x, out = _working(input, dtype)
    if x.dim() == 0:
        return (x - x).exp().to(out)  # a single element: 1 (NaN for NaN/inf), with its graph
    if x.numel() == 0:  # no rows, or empty rows: nothing to normalise (amax would refuse an empty dim)
        return (x * 0).to(out)
    # Subtracting the row's largest element keeps exp() from overflowing; the shift cancels out,
    # so its gradient is zero and it is detached. A row holding +inf or only -inf gives NaN, as PyTorch.
    e = (x - x.amax(dim, keepdim=True).detach()).exp()
    return (e / e.sum(dim, keepdim=True)).to(out)


def _log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    x, out = _working(input, dtype)
    if x.dim() == 0:
        return (x - x).to(out)
    if x.numel() == 0:
        return (x * 0).to(out)
    shifted = x - x.amax(dim, keepdim=True).detach()
    return (shifted - shifted.exp().sum(dim, keepdim=True).log()).to(out)


def _softmax_backward(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """grad_input = y * (g - sum(g * y, dim)) for y = softmax(x)."""
    g, y = _wide_pair(grad_output, output)
    if y.dim() == 0:
        return (y * (g - g * y)).to(output.dtype)
    return (y * (g - (g * y).sum(dim, keepdim=True))).to(output.dtype)


def _log_softmax_backward(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """grad_input = g - exp(y) * sum(g, dim) for y = log_softmax(x)."""
    g, y = _wide_pair(grad_output, output)
    total = g if y.dim() == 0 else g.sum(dim, keepdim=True)
    return (g - y.exp() * total).to(output.dtype)


def _wide_pair(g: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    if y.dtype.name in _HALF:
        return g.to(_dtypes.float32), y.to(_dtypes.float32)
    return g, y


def declarations() -> list[OpDecl]:
    return [
        OpDecl("softmax", "(input: Tensor, dim, dtype=None)", _softmax_meta("softmax"), composite=_softmax,
               doc="``exp(input) / sum(exp(input), dim)``, computed without overflow; with ``dtype``, the "
                   "input is cast to it first."),
        OpDecl("log_softmax", "(input: Tensor, dim, dtype=None)", _softmax_meta("log_softmax"),
               composite=_log_softmax,
               doc="``log(softmax(input, dim))``, computed in one stable step; with ``dtype``, the input is cast "
                   "to it first."),
        OpDecl("_softmax_backward_data", "(grad_output: Tensor, output: Tensor, dim)",
               _backward_meta("softmax_backward_data"), composite=_softmax_backward, method=False, export=False,
               doc="The gradient of ``softmax`` at its output ``output``: ``output * (grad_output - "
                   "sum(grad_output * output, dim))``."),
        OpDecl("_log_softmax_backward_data", "(grad_output: Tensor, output: Tensor, dim)",
               _backward_meta("log_softmax_backward_data"), composite=_log_softmax_backward, method=False,
               export=False,
               doc="The gradient of ``log_softmax`` at its output ``output``: ``grad_output - exp(output) * "
                   "sum(grad_output, dim)``."),
    ]

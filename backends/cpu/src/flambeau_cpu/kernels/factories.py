"""numpy kernels for factory ops and copies."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._int_scalars import fitted
from ._quiet import quiet

try:  # threaded same-dtype copies (numpy copies on one thread)
    from .._C import copy_into as _copy_into
except (ImportError, AttributeError):  # a source checkout without the extension built
    _copy_into = None


def _unwrap(value: Any) -> Any:
    return value.item() if isinstance(value, np.ndarray) else value


def arange(start, end, step, dtype, device, requires_grad, out):
    count = out.shape[0]
    if out.dtype.kind in "iub":
        # PyTorch computes an integral arange in int64: start and step are truncated first
        # (the length was computed from the exact values), so arange(0, 2, 0.5, dtype=int) is all 0.
        start, step = int(_unwrap(start)), int(_unwrap(step))
        np.copyto(out, start + step * np.arange(count, dtype=np.int64), casting="unsafe")
    else:
        np.copyto(out, start + step * np.arange(count, dtype=np.float64), casting="unsafe")


def linspace(start, end, steps, dtype, device, requires_grad, out):
    values = np.linspace(_unwrap(start), _unwrap(end), steps, dtype=np.float64)
    np.copyto(out, np.trunc(values) if out.dtype.kind in "iu" else values, casting="unsafe")


def logspace(start, end, steps, base, dtype, device, requires_grad, out):
    exponents = np.linspace(_unwrap(start), _unwrap(end), steps, dtype=np.float64)
    np.copyto(out, np.power(float(base), exponents), casting="unsafe")


def eye(n, m, dtype, device, requires_grad, out):
    out.fill(0)
    if out.size:
        np.fill_diagonal(out, 1)


def clone(input, memory_format, out):
    if _copy_into is None or not _copy_into(out, input):
        np.copyto(out, input)


def _drop_imaginary(src, out):
    """A complex source for a real destination: its real part, or for bool whether it is nonzero."""
    if isinstance(src, np.ndarray) and src.dtype.kind == "c" and out.dtype.kind != "c":
        return src != 0 if out.dtype.kind == "b" else src.real
    return src


@quiet  # NaN or inf to an integer dtype, float32 past float16's range: no warnings, as in PyTorch
def copy(input, src, out):
    if _copy_into is not None and src.__class__ is np.ndarray and src.dtype == out.dtype and _copy_into(out, src):
        return
    try:
        np.copyto(out, _drop_imaginary(src, out), casting="unsafe")
    except OverflowError:  # -1 into a uint8 is 255 (the meta refused what does not fit)
        np.copyto(out, fitted(src, out.dtype), casting="unsafe")


def fill(input, value, out):
    try:
        out[...] = value
    except OverflowError:  # -1 fills a uint8 with 255, as in PyTorch (the meta refused what does not fit)
        out[...] = fitted(value, out.dtype)


@quiet
def to_dtype(input, dtype, out):
    np.copyto(out, _drop_imaginary(input, out), casting="unsafe")


KERNELS: dict[str, Callable[..., Any]] = {
    "arange": arange, "linspace": linspace, "logspace": logspace, "eye": eye, "clone": clone, "copy": copy,
    "fill": fill, "to_dtype": to_dtype,
}

"""Host decompositions of ``flambeau.fft``'s primitive transforms, by ``numpy.fft``.

A Fourier transform has no reasonable formulation on the core tier (a DFT as a matrix product
is O(n^2) and loses float32 accuracy for long lines), so a backend without FFT kernels brings
the input to the host, transforms it there and copies the result back (two transfers, no
autograd history; see ``host.py``). The composites (``fft2``/``ifft2``/``rfft2``/``irfft2``,
``hfft``, ``ihfft``) are written on these primitives and so run the same way.

The op's meta function has already checked the arguments (norm, n/s, dims, dtypes) and gives the
result's shape and dtype; the transform runs in that dtype's precision (numpy >= 2 keeps
float32/complex64 in single precision, as PyTorch does): integer and bool inputs become the
result's precision first.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..._tensor import Tensor
from ...ops._registry import OPS
from ..fft_ops import fft_dims
from . import decomposition
from .host import _from_host, _to_host


def _planned(name: str, x: Tensor, *args: Any) -> tuple[np.ndarray, tuple[int, ...], Any]:
    """The input on the host in the result's precision (real inputs stay real), the result's shape
    and its flambeau dtype."""
    shape, dt = OPS[name].meta(x, *args)
    host = _to_host(x)
    complex_dt = np.result_type(dt.numpy_dtype, np.complex64)
    work = complex_dt if host.dtype.kind == "c" else np.finfo(complex_dt).dtype  # the real of complex_dt
    return host.astype(work, copy=False), tuple(shape), dt


def _finish(values: np.ndarray | None, shape: tuple[int, ...], dt: Any, device: Any) -> Tensor:
    if values is None:  # nothing to transform: an empty result
        values = np.zeros(shape, dt.numpy_dtype)
    return _from_host(values, dt, device)


def _one(name: str, transform: Callable[..., np.ndarray], length: Callable[[tuple, int], int]) -> None:
    """Register the 1-D transform ``name``: ``transform(x, n, axis, norm)``; ``length(result shape,
    axis)`` is the ``n`` numpy is given (the signal's length, which for irfft is the result's)."""

    @decomposition(name, "to_dtype", host=True)
    def composite(x: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
        host, shape, dt = _planned(name, x, n, dim, norm)
        axis = dim % host.ndim
        values = transform(host, length(shape, axis) if n is None else n, axis, norm) if np.prod(shape) else None
        return _finish(values, shape, dt, x._device)

    composite.__doc__ = f"``{name}`` by ``numpy.fft`` on the host."


def _many(name: str, transform: Callable[..., np.ndarray], real_last: bool) -> None:
    """Register the n-D transform ``name``: ``transform(x, s, axes, norm)``. With ``real_last``
    (rfftn) the last axis's length is the real signal's, not the result's (n // 2 + 1)."""

    @decomposition(name, "to_dtype", host=True)
    def composite(x: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
        host, shape, dt = _planned(name, x, s, dim, norm)
        axes = fft_dims(host.ndim, s, dim)
        if not axes:  # fftn/ifftn over no axis: the input, as a complex tensor
            return _finish(host.astype(dt.numpy_dtype), shape, dt, x._device)
        sizes = [shape[a] for a in axes]
        if real_last:
            last = s[-1] if s is not None and s[-1] != -1 else host.shape[axes[-1]]
            sizes[-1] = last
        values = transform(host, sizes, axes, norm) if np.prod(shape) else None
        return _finish(values, shape, dt, x._device)

    composite.__doc__ = f"``{name}`` by ``numpy.fft`` on the host."


def _same_length(shape: tuple, axis: int) -> int:
    return shape[axis]


def _rfft_length(shape: tuple, axis: int) -> Any:
    return None  # n None: the input's own length (the result holds n // 2 + 1 of it)


def _numpy(name: str) -> Callable[..., np.ndarray]:
    """``numpy.fft.NAME``, looked up at the call: ``import flambeau`` does not load numpy.fft."""
    def transform(x: np.ndarray, *args: Any) -> np.ndarray:
        if name.startswith("irfft"):  # a real half-spectrum is a complex one with zero imaginary parts
            x = x.astype(np.result_type(x.dtype, np.complex64), copy=False)
        return getattr(np.fft, name)(x, *args)
    return transform


_one("fft_fft", _numpy("fft"), _same_length)
_one("fft_ifft", _numpy("ifft"), _same_length)
_one("fft_rfft", _numpy("rfft"), _rfft_length)
_one("fft_irfft", _numpy("irfft"), _same_length)
_many("fft_fftn", _numpy("fftn"), False)
_many("fft_ifftn", _numpy("ifftn"), False)
_many("fft_rfftn", _numpy("rfftn"), True)
_many("fft_irfftn", _numpy("irfftn"), False)

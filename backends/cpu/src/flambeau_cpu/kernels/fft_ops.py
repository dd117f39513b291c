"""CPU kernels of ``flambeau.fft``: numpy's pocketfft, writing straight into the output.

numpy (>= 2) transforms float32/complex64 in single precision, as PyTorch does; integer and
bool inputs are first made float32 so that they give complex64 (PyTorch's default complex dtype).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _prepared(input: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The input in the precision of the output (integers and bool become floats)."""
    want = np.empty(0, dtype=out.dtype).real.dtype
    if input.dtype.kind in "biu" or input.real.dtype != want:
        return input.astype(want if input.dtype.kind != "c" else out.dtype)
    return input


def _norm(norm: Any) -> str:
    return norm or "backward"


def _dims(s: Any, dim: Any, ndim: int) -> tuple[int, ...]:
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        return tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    return tuple(d % ndim for d in dim)


def _c2c(transform: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, n, dim, norm, out):
        x = _prepared(input, out)
        if out.size == 0:
            return
        if x.dtype.kind == "c" or transform is not np.fft.fft:
            transform(x, n, dim, _norm(norm), out=out)
        else:
            # a real signal: rfft's half spectrum and its conjugate mirror (about twice as fast)
            size = out.shape[dim]
            half = np.fft.rfft(x, n, dim, _norm(norm))
            idx = [slice(None)] * out.ndim
            idx[dim] = slice(0, half.shape[dim])
            out[tuple(idx)] = half
            rest = size - half.shape[dim]
            if rest > 0:
                src = [slice(None)] * out.ndim
                src[dim] = slice(rest, 0, -1)
                idx[dim] = slice(half.shape[dim], size)
                out[tuple(idx)] = np.conj(half[tuple(src)])
    return kernel


def fft_rfft(input, n, dim, norm, out):
    x = _prepared(input, out)
    if out.size:
        np.fft.rfft(x, n, dim, _norm(norm), out=out)


def fft_irfft(input, n, dim, norm, out):
    x = _prepared(input, out) if input.dtype.kind == "c" else input.astype(np.result_type(out.dtype, np.complex64))
    if out.size:
        np.fft.irfft(x, out.shape[dim], dim, _norm(norm), out=out)


def _c2c_n(transform: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(input, s, dim, norm, out):
        x = _prepared(input, out)
        axes = _dims(s, dim, out.ndim)
        if not axes:
            np.copyto(out, x, casting="unsafe")
        elif out.size:
            sizes = [out.shape[a] for a in axes]
            if x.shape == out.shape:
                transform(x, sizes, axes, _norm(norm), out=out)
            else:  # numpy's out= cannot follow a shape that changes from one axis to the next
                np.copyto(out, transform(x, sizes, axes, _norm(norm)))
    return kernel


def fft_rfftn(input, s, dim, norm, out):
    x = _prepared(input, out)
    axes = _dims(s, dim, out.ndim)
    sizes = [x.shape[a] if s is None or s[i] == -1 else s[i] for i, a in enumerate(axes)]
    if out.size:
        np.copyto(out, np.fft.rfftn(x, sizes, axes, _norm(norm)))


def fft_irfftn(input, s, dim, norm, out):
    x = _prepared(input, out) if input.dtype.kind == "c" else input.astype(np.result_type(out.dtype, np.complex64))
    axes = _dims(s, dim, out.ndim)
    if out.size:
        np.copyto(out, np.fft.irfftn(x, [out.shape[a] for a in axes], axes, _norm(norm)))


def _freq(kind: str) -> Callable[..., Any]:
    def kernel(n, d, dtype, device, requires_grad, out):
        if n == 0:
            out.fill(np.nan)  # PyTorch: rfftfreq(0) is [nan] (0 / 0), fftfreq(0) is empty
            return
        values = np.fft.fftfreq(n, d) if kind == "fft" else np.fft.rfftfreq(n, d)
        np.copyto(out, values, casting="unsafe")
    return kernel


KERNELS: dict[str, Callable[..., Any]] = {
    "fft_fft": _c2c(np.fft.fft), "fft_ifft": _c2c(np.fft.ifft), "fft_rfft": fft_rfft, "fft_irfft": fft_irfft,
    "fft_fftn": _c2c_n(np.fft.fftn), "fft_ifftn": _c2c_n(np.fft.ifftn), "fft_rfftn": fft_rfftn,
    "fft_irfftn": fft_irfftn, "fft_fftfreq": _freq("fft"), "fft_rfftfreq": _freq("rfft"),
}

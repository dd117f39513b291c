"""CPU kernels of ``flambeau.fft``: Intel MKL's FFTs when the backend's ``mkl`` extra is installed,
else scipy.fft (C++ pocketfft with SIMD).

MKL (through mkl_fft) was measured 2-3x faster than pocketfft here from 1024 points up and as fast
at 100, level with PyTorch, which links MKL too (docs/performance.md). scipy.fft was measured ~6x
faster than numpy.fft on 2^20 complex64 points and ~2x faster on 100 (numpy's pocketfft here runs
without vectorisation). All keep float32/complex64 in single precision, as PyTorch does. Integer
and bool inputs are first made float32 so that they give complex64 (PyTorch's default complex
dtype).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from flambeau._core_ops.fft_ops import fft_dims


try:
    from .._C import get_num_threads as _num_threads
except (ImportError, AttributeError):  # a source checkout without the extension built
    def _num_threads() -> int:
        return 1

#: From this many points a transform is handed pocketfft's threads (flambeau.set_num_threads).
_THREADED_POINTS = 1 << 15


def _threads(points: int) -> int:
    return _num_threads() if points >= _THREADED_POINTS else 1

class _LazyScipyFFT:
    """scipy.fft, imported at the first transform (not at ``import flambeau``: it costs ~30 ms);
    each function is then cached on this object, so later lookups are plain attribute reads."""

    def __getattr__(self, name: str) -> Any:
        import scipy.fft

        fn = getattr(scipy.fft, name)
        setattr(self, name, fn)
        return fn


sfft = _LazyScipyFFT()
_REAL = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64),
         np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64)}


def _prepared(input: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The input in the precision of the output (integers and bool become floats)."""
    want = _REAL[out.dtype]
    if _REAL.get(input.dtype) is want:
        return input
    return input.astype(want if input.dtype.kind != "c" else out.dtype)


def _norm(norm: Any) -> str:
    return norm or "backward"


_INORM = {  # pocketfft's scaling code (0: none, 1: 1/sqrt(n), 2: 1/n) by (norm, forward)
    (None, True): 0, ("backward", True): 0, ("ortho", True): 1, ("forward", True): 2,
    (None, False): 2, ("backward", False): 2, ("ortho", False): 1, ("forward", False): 0,
}


def _mkl() -> Any:
    """mkl_fft (the optional ``mkl`` extra), or None where it is not installed.

    Its functions take numpy.fft's arguments plus ``out=``. MKL picks its threading layer at load
    time; with the kernels' libgomp already loaded it runs on that same OpenMP pool, so it follows
    flambeau.set_num_threads and adds no spinning threads of its own."""
    global _MKL
    if _MKL is False:
        try:
            import mkl_fft

            _MKL = mkl_fft
            from .. import _threads

            _threads.reapply()  # MKL has just been loaded: give it set_num_threads' count
        except ImportError:
            _MKL = None
    return _MKL


_MKL: Any = False

#: Below this many output points pocketfft's direct call is quicker: mkl_fft's fixed cost is ~1.3 us
#: (16 points: 1.27 us against pocketfft's 0.53; 512 points: 1.76 against 2.34).
_MKL_POINTS = 512


def _on_mkl(name: str, x: np.ndarray, sizes: Any, dims: Any, norm: Any, out: np.ndarray) -> bool:
    """``out = mkl_fft.NAME(x, sizes, dims, norm)`` (sizes and dims: n and dim, or s and dims); False,
    having done nothing, where mkl_fft is not installed or the transform is too small to gain."""
    mkl = _mkl() if out.size >= _MKL_POINTS else None
    if mkl is None:
        return False
    getattr(mkl, name)(x, sizes, dims, _norm(norm), out=out)
    return True


def _pocketfft() -> Any:
    """scipy's pocketfft binding, called straight (scipy.fft's checks cost ~4 us of a 5 us
    100-point transform); None where this scipy lacks it (scipy.fft is used then)."""
    global _POCKET
    if _POCKET is False:
        try:
            from scipy.fft._pocketfft import pypocketfft as binding

            binding.c2c  # noqa: B018 - the entry point relied on
            _POCKET = binding
        except (ImportError, AttributeError):
            _POCKET = None
    return _POCKET


_POCKET: Any = False


#: ``_fft_four_step.MIN_POINTS`` (test_fft checks they agree): the four-step module, ~2% of
#: ``import flambeau``, loads with the first transform that long.
_FOUR_STEP_MIN_POINTS = 1 << 16


def _four_step() -> Any:
    from . import _fft_four_step

    return _fft_four_step


def _c2c(name: str) -> Callable[..., Any]:
    forward = name.startswith("fft")

    def kernel(input, n, dim, norm, out):
        if not out.size:
            return
        x = _prepared(input, out)
        if _on_mkl(name, x, n, dim, norm, out):
            return
        binding = _pocketfft()
        if binding is not None and x.shape == out.shape and x.dtype.kind == "c":
            axis, inorm = dim % x.ndim, _INORM[norm, forward]
            threads = _threads(out.size)
            if out.size == out.shape[axis] >= _FOUR_STEP_MIN_POINTS and \
                    _four_step().c2c(binding, x.reshape(-1), out, forward, inorm, threads):
                return  # one long line: split into short batched ones
            binding.c2c(x, (axis,), forward, inorm, out, threads)
            return
        out[...] = getattr(sfft, name)(x, n, dim, norm or "backward")
    return kernel


def fft_rfft(input, n, dim, norm, out):
    if out.size:
        _real_transform("rfft", _prepared(input, out), n, dim, norm, out)


def fft_irfft(input, n, dim, norm, out):
    x = _prepared(input, out) if input.dtype.kind == "c" else input.astype(np.result_type(out.dtype, np.complex64))
    if out.size:
        _real_transform("irfft", x, out.shape[dim], dim, norm, out)


def _real_transform(name: str, x: np.ndarray, sizes: Any, dims: Any, norm: Any, out: np.ndarray) -> None:
    """out = rfft/irfft/rfftn/irfftn(x) (``sizes`` and ``dims``: n and dim, or s and dims), by MKL
    when it is installed, else by scipy.fft."""
    if not _on_mkl(name, x, sizes, dims, norm, out):
        np.copyto(out, getattr(sfft, name)(x, sizes, dims, _norm(norm)))


def _c2c_n(name: str) -> Callable[..., Any]:
    def kernel(input, s, dim, norm, out):
        x = _prepared(input, out)
        axes = fft_dims(out.ndim, s, dim)
        if not axes:
            np.copyto(out, x, casting="unsafe")
        elif out.size:
            sizes = [out.shape[a] for a in axes]
            if _on_mkl(name, x, sizes, axes, norm, out):
                return
            binding = _pocketfft()
            if binding is not None and x.shape == out.shape and x.dtype.kind == "c":
                forward = name.startswith("fft")
                binding.c2c(x, axes, forward, _INORM[norm, forward], out, _threads(out.size))
            else:
                np.copyto(out, getattr(sfft, name)(x, sizes, axes, _norm(norm)))
    return kernel


def fft_rfftn(input, s, dim, norm, out):
    x = _prepared(input, out)
    axes = fft_dims(out.ndim, s, dim)
    sizes = [x.shape[a] if s is None or s[i] == -1 else s[i] for i, a in enumerate(axes)]
    if out.size:
        _real_transform("rfftn", x, sizes, axes, norm, out)


def fft_irfftn(input, s, dim, norm, out):
    x = _prepared(input, out) if input.dtype.kind == "c" else input.astype(np.result_type(out.dtype, np.complex64))
    axes = fft_dims(out.ndim, s, dim)
    if out.size:
        _real_transform("irfftn", x, [out.shape[a] for a in axes], axes, norm, out)


def _freq(kind: str) -> Callable[..., Any]:
    def kernel(n, d, dtype, device, requires_grad, out):
        if n == 0:
            out.fill(np.nan)  # PyTorch: rfftfreq(0) is [nan] (0 / 0), fftfreq(0) is empty
            return
        values = np.fft.fftfreq(n, d) if kind == "fft" else np.fft.rfftfreq(n, d)
        np.copyto(out, values, casting="unsafe")
    return kernel


KERNELS: dict[str, Callable[..., Any]] = {
    "fft_fft": _c2c("fft"), "fft_ifft": _c2c("ifft"), "fft_rfft": fft_rfft, "fft_irfft": fft_irfft,
    "fft_fftn": _c2c_n("fftn"), "fft_ifftn": _c2c_n("ifftn"), "fft_rfftn": fft_rfftn,
    "fft_irfftn": fft_irfftn, "fft_fftfreq": _freq("fft"), "fft_rfftfreq": _freq("rfft"),
}

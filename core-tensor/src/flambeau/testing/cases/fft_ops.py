"""Cases for ``flambeau.fft``: the transforms (with n/s, dim, norm), frequencies and shifts.

References are numpy.fft in double precision; integer and bool inputs must give complex64.
"""
from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import DEVICE, Arg, ErrorCase, OpCase, Sample

IN = ("float32", "float64", "complex64", "complex128", "int64", "bool")
REAL_IN = ("float32", "float64", "int64")
TOL = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)}


def _cplx(sample: Sample) -> str:
    return P.to_complex(sample.args[0].dtype)


def _real(sample: Sample) -> str:
    return P.to_real(P.to_complex(sample.args[0].dtype))


def _one(dtype: str) -> list[Sample]:
    return [Sample((Arg((8,), dtype),)), Sample((Arg((3, 5), dtype, "transposed"), 7, 0, "ortho")),
            Sample((Arg((2, 6), dtype, "sliced"), 4, -1, "forward")), Sample((Arg((0, 4), dtype),)),
            Sample((Arg((4, 3), dtype), None, 0, "backward"))]


def _irfft_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((5,), dtype),)), Sample((Arg((3, 5), dtype, "transposed"), 7, 0, "ortho")),
            Sample((Arg((2, 4), dtype, "sliced"), 4, -1, "forward")), Sample((Arg((4, 3), dtype), 5, 0))]


def _many(dtype: str) -> list[Sample]:
    return [Sample((Arg((4, 6), dtype),)), Sample((Arg((2, 3, 4), dtype, "transposed"), (5, 2), (0, 2), "ortho")),
            Sample((Arg((3, 4), dtype, "sliced"), (6,), None, "forward")),
            Sample((Arg((2, 3, 4), dtype), None, (1, 2))), Sample((Arg((3, 4), dtype), (-1, 6), None))]


def _two(dtype: str) -> list[Sample]:
    return [Sample((Arg((4, 6), dtype),)), Sample((Arg((2, 3, 4), dtype, "transposed"), (5, 2), (0, 2), "ortho")),
            Sample((Arg((3, 4), dtype, "sliced"), None, (-2, -1), "forward"))]


def _sizes(s, axes):
    return None if s is None else list(s)


def _np1(fn):
    def ref(x, n=None, dim=-1, norm=None):
        if x.dtype == bool:
            x = x.astype(np.float64)
        return fn(x, n, dim, norm)
    return ref


def _npn(fn, two=False):
    def ref(x, s=None, dim=(-2, -1) if two else None, norm=None):
        if x.dtype == bool:
            x = x.astype(np.float64)
        if s is not None:
            axes = dim if dim is not None else tuple(range(x.ndim - len(s), x.ndim))
            s = [x.shape[a] if v == -1 else v for a, v in zip(axes, s)]
        elif dim is not None:
            s = [x.shape[a] for a in dim]
        if dim is None and s is not None:
            dim = tuple(range(x.ndim - len(s), x.ndim))
        return fn(x, s, dim, norm)
    return ref


def _irfftn_ref(two=False):
    def ref(x, s=None, dim=(-2, -1) if two else None, norm=None):
        axes = dim if dim is not None else (tuple(range(x.ndim - len(s), x.ndim)) if s is not None else
                                            tuple(range(x.ndim)))
        if s is None:
            s = [x.shape[a] for a in axes]
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
        else:
            s = list(s)
            for i, a in enumerate(axes):
                if s[i] == -1:
                    s[i] = x.shape[a] if i < len(axes) - 1 else 2 * (x.shape[a] - 1)
        return np.fft.irfftn(x, s, axes, norm)
    return ref


def _freq_samples(dtype: str) -> list[Sample]:
    import flambeau

    kw = {"dtype": getattr(flambeau, dtype), "device": DEVICE}
    return [Sample((5,), kw), Sample((8, 0.5), kw), Sample((1,), kw), Sample((0,), kw)]


def _shift_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((5,), dtype),)), Sample((Arg((4, 5), dtype, "transposed"),)),
            Sample((Arg((3, 4), dtype), 1)), Sample((Arg((2, 3, 4), dtype), (0, 2)))]


def _e(msg, *args, exc=RuntimeError, **kw):
    return ErrorCase(tuple(args), exc, msg, kw)


def _one_errors():
    return [_e('Invalid normalization mode: "bad"', Arg((4,), "float32"), norm="bad"),
            _e("Invalid number of data points (0) specified", Arg((4,), "float32"), 0),
            _e("Dimension out of range", Arg((4,), "float32"), None, 2, exc=IndexError),
            _e("Unsupported dtype Half", Arg((4,), "float16"))]


def _many_errors():
    return [_e("Got shape with 3 values but input tensor only has 2 dimensions.", Arg((4, 4), "float32"), (2, 2, 2)),
            _e("When given, dim and shape arguments must have the same length", Arg((4, 4), "float32"), (2, 2), (0,)),
            _e("FFT dims must be unique", Arg((4, 4), "float32"), None, (0, 0))]


def _two_errors():
    return [_e("When given, dim and shape arguments must have the same length", Arg((4, 4), "float32"), (2, 2, 2)),
            _e("FFT dims must be unique", Arg((4, 4), "float32"), None, (0, 0))]


def cases() -> list[OpCase]:
    def tr(op, dtypes, samples, ref, out, errors=_one_errors):
        return OpCase(op, dtypes, samples, ref, out, tolerances=TOL, errors=errors)

    return [
        tr("fft_fft", IN, _one, _np1(np.fft.fft), _cplx),
        tr("fft_ifft", IN, _one, _np1(np.fft.ifft), _cplx),
        tr("fft_rfft", REAL_IN, _one, _np1(np.fft.rfft), _cplx,
           lambda: [*_one_errors(), _e("rfft expects a real input tensor, but got ComplexFloat",
                                       Arg((4,), "complex64"))]),
        tr("fft_irfft", IN, _irfft_samples, _np1(np.fft.irfft), _real),
        tr("fft_hfft", IN, _irfft_samples, _np1(np.fft.hfft), _real),
        tr("fft_ihfft", REAL_IN, _one, _np1(np.fft.ihfft), _cplx),
        tr("fft_fftn", IN, _many, _npn(np.fft.fftn), _cplx, _many_errors),
        tr("fft_ifftn", IN, _many, _npn(np.fft.ifftn), _cplx, _many_errors),
        tr("fft_rfftn", REAL_IN, _many, _npn(np.fft.rfftn), _cplx, _many_errors),
        tr("fft_irfftn", IN, _many, _irfftn_ref(), _real, _many_errors),
        tr("fft_fft2", IN, _two, _npn(np.fft.fft2, True), _cplx, _two_errors),
        tr("fft_ifft2", IN, _two, _npn(np.fft.ifft2, True), _cplx, _two_errors),
        tr("fft_rfft2", REAL_IN, _two, _npn(np.fft.rfft2, True), _cplx, _two_errors),
        tr("fft_irfft2", IN, _two, _irfftn_ref(True), _real, _two_errors),
        OpCase("fft_fftfreq", ("float32", "float64"), _freq_samples,
               lambda n, d=1.0, dtype=None, device=None, requires_grad=False:
                   np.fft.fftfreq(n, d) if n else np.empty(0),
               lambda s: s.kwargs["dtype"].name),
        OpCase("fft_rfftfreq", ("float32", "float64"), _freq_samples,
               lambda n, d=1.0, dtype=None, device=None, requires_grad=False:
                   np.fft.rfftfreq(n, d) if n else np.full(1, np.nan),
               lambda s: s.kwargs["dtype"].name),
        OpCase("fft_fftshift", P.ALL, _shift_samples, lambda x, dim=None: np.fft.fftshift(x, dim),
               lambda s: s.args[0].dtype),
        OpCase("fft_ifftshift", P.ALL, _shift_samples, lambda x, dim=None: np.fft.ifftshift(x, dim),
               lambda s: s.args[0].dtype),
    ]

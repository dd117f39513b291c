"""Kernels beyond the core tier, on ``xp``: ops with no decomposition onto it, and ops the core tier
would run through the host (sorting).

Each is a CuPy array function (or ``cupyx.scipy.special``'s) where its semantics match PyTorch's;
the kit checks them against the same references as the CPU backend. Orders are stable and NaN
ranks above every number, as in PyTorch.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import numpy as np

from flambeau.backend_kit import HALF_TYPES, is_floating, work_dtype

from .kernels import special_functions

#: Unary special functions: op name -> scipy.special's (and cupyx.scipy.special's) name.
_UNARY_SPECIAL = {
    "erfc": "erfc", "erfinv": "erfinv", "lgamma": "gammaln", "digamma": "psi", "i0": "i0",
    "special_erfcx": "erfcx", "special_i0e": "i0e", "special_i1": "i1", "special_i1e": "i1e",
    "special_log_ndtr": "log_ndtr", "special_ndtr": "ndtr", "special_ndtri": "ndtri", "special_entr": "entr",
    "special_bessel_j0": "j0", "special_bessel_j1": "j1", "special_bessel_y0": "y0", "special_bessel_y1": "y1",
    "special_modified_bessel_i0": "i0", "special_modified_bessel_i1": "i1", "special_modified_bessel_k0": "k0",
    "special_modified_bessel_k1": "k1", "special_scaled_modified_bessel_k0": "k0e",
    "special_scaled_modified_bessel_k1": "k1e",
}
#: Binary special functions: op name -> scipy.special's name.
_BINARY_SPECIAL = {"special_xlog1py": "xlog1py", "special_zeta": "zeta", "igamma": "gammainc",
                   "igammac": "gammaincc"}


def make_extra_kernels(xp: ModuleType) -> dict[str, Callable[..., Any]]:
    special = special_functions(xp)

    def as_work(x: Any, out: Any) -> Any:
        """An operand in the dtype the result computes in (half types in float32)."""
        dt = work_dtype(out.dtype)
        if isinstance(x, xp.ndarray):
            return x if x.dtype == dt else x.astype(dt)
        return xp.asarray(x, dtype=dt)

    def store(out: Any, value: Any) -> None:
        xp.copyto(out, value, casting="unsafe")

    def unary(fn_name: str) -> Callable[..., None]:
        def kernel(input, out):
            store(out, getattr(special, fn_name)(as_work(input, out)))
        kernel.__name__ = fn_name
        return kernel

    def binary(fn_name: str) -> Callable[..., None]:
        def kernel(input, other, out):
            store(out, getattr(special, fn_name)(as_work(input, out), as_work(other, out)))
        kernel.__name__ = fn_name
        return kernel

    def special_spherical_bessel_j0(input, out):
        x = as_work(input, out)
        safe = xp.where(x == 0, 1, x)
        # 1 at 0 and 0 at +-inf (sin(inf) / inf is NaN), PyTorch's limits
        store(out, xp.where(x == 0, 1, xp.where(xp.isinf(x), 0, xp.sin(safe) / safe)))

    def polygamma(n, input, out):
        x = as_work(input, out)
        store(out, special.psi(x) if n == 0 else special.polygamma(n, x))

    def mvlgamma(input, p, out):
        x = as_work(input, out)
        if x.size and not bool(xp.all(x > (p - 1) / 2)):
            raise RuntimeError("All elements must be greater than (p-1)/2")
        total = xp.full(x.shape, p * (p - 1) / 4 * np.log(np.pi), dtype=x.dtype)
        for j in range(p):
            total = total + special.gammaln(x - j / 2)
        store(out, total)

    def median(input, out):
        """The lower median of all elements; NaN if any is NaN, as PyTorch's."""
        flat = input.reshape(-1)
        if flat.size == 0:
            out[...] = np.nan if is_floating(out.dtype) else 0
            return
        key = flat.astype(np.float32) if flat.dtype.name in HALF_TYPES else flat
        if is_floating(key.dtype) and bool(xp.any(xp.isnan(key))):
            out[...] = np.nan
            return
        store(out, xp.sort(key)[(flat.size - 1) // 2])

    def logit(input, eps, out):
        x = as_work(input, out)
        if eps is not None:
            x = xp.clip(x, eps, 1 - eps)
        store(out, xp.log(x / (1 - x)))

    def sinc(input, out):
        x = input if input.dtype.kind == "c" else as_work(input, out)
        store(out, xp.sinc(x))

    def nextafter(input, other, out):
        # in the result's own dtype: the next float32 after x is not the next float64's
        store(out, xp.nextafter(input.astype(out.dtype), xp.asarray(other).astype(out.dtype)))

    def ldexp(input, other, out):
        store(out, as_work(input, out) * xp.exp2(as_work(other, out)))

    def float_power(input, exponent, out):
        store(out, xp.power(as_work(input, out), as_work(exponent, out)))

    def frexp(input, out):
        mantissa, exponent = out
        x = input if input.dtype.kind == "f" and input.dtype.itemsize >= 2 else input.astype(np.float32)
        m, e = xp.frexp(x)
        store(mantissa, m)
        store(exponent, e)

    # -- comparisons ------------------------------------------------------------------------

    def close(input, other, rtol, atol, equal_nan):
        a, b = input, other
        if not is_floating(a.dtype) or a.dtype.name in HALF_TYPES:
            a, b = a.astype(np.float64 if not is_floating(a.dtype) else np.float32), b.astype(
                np.float64 if not is_floating(b.dtype) else np.float32)
        return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def isclose(input, other, rtol, atol, equal_nan, out):
        store(out, close(input, other, rtol, atol, equal_nan))

    def allclose(input, other, rtol, atol, equal_nan, out):
        store(out, xp.all(close(input, other, rtol, atol, equal_nan)))

    def equal(input, other, out):
        same = input.shape == other.shape and bool(xp.all(input == other))
        store(out, same)

    # -- ordering -----------------------------------------------------------------------------

    def order(x, dim, descending):
        """Stable argsort along ``dim``; descending keeps ties first-come and NaN first."""
        key = x.astype(np.float32) if x.dtype.name in HALF_TYPES else x
        if not descending:
            return xp.argsort(key, axis=dim, kind="stable")
        n = key.shape[dim]
        flipped = xp.flip(key, axis=dim)
        return (n - 1) - xp.flip(xp.argsort(flipped, axis=dim, kind="stable"), axis=dim)

    def sort(input, dim, descending, stable, out):
        values, indices = out
        if input.ndim == 0:
            store(values, input)
            indices[...] = 0
            return
        o = order(input, dim, descending)
        store(values, xp.take_along_axis(input, o, axis=dim))
        store(indices, o)

    def argsort(input, dim, descending, stable, out):
        if input.ndim == 0:
            out[...] = 0
            return
        store(out, order(input, dim, descending))

    def msort(input, out):
        if input.ndim == 0:
            store(out, input)
            return
        store(out, xp.take_along_axis(input, order(input, 0, False), axis=0))

    def topk(input, k, dim, largest, sorted, out):
        values, indices = out
        if input.ndim == 0:
            store(values, input.reshape(values.shape))
            indices[...] = 0
            return
        o = xp.take(order(input, dim, largest), xp.arange(k), axis=dim)
        store(values, xp.take_along_axis(input, o, axis=dim))
        store(indices, o)

    def kthvalue(input, k, dim, keepdim, out):
        values, indices = out
        if input.ndim == 0:
            store(values, input)
            indices[...] = 0
            return
        index = xp.take(order(input, dim, False), xp.asarray([k - 1]), axis=dim)
        picked = xp.take_along_axis(input, index, axis=dim)
        if not keepdim:
            picked, index = picked.squeeze(dim), index.squeeze(dim)
        store(values, picked)
        store(indices, index)

    def searchsorted(sorted_sequence, input, out_int32, right, side, sorter, out):
        if sorter is not None and sorter.size and (bool(xp.any(sorter < 0))
                                                   or bool(xp.any(sorter >= sorted_sequence.shape[-1]))):
            raise RuntimeError("flambeau.searchsorted(): sorter index out of range")
        which = "right" if right or side == "right" else "left"
        seq = sorted_sequence if sorter is None else xp.take_along_axis(sorted_sequence, sorter, axis=-1)
        values = input if isinstance(input, xp.ndarray) else xp.asarray(input, dtype=seq.dtype)
        if seq.ndim <= 1:
            store(out, xp.searchsorted(seq, values, side=which).reshape(out.shape))
            return
        rows = seq.reshape(-1, seq.shape[-1])
        wanted = values.reshape(rows.shape[0], -1)
        result = xp.empty(wanted.shape, np.int64)
        for r in range(rows.shape[0]):  # one launch per row: CuPy's searchsorted takes one sequence
            result[r] = xp.searchsorted(rows[r], wanted[r], side=which)
        store(out, result.reshape(out.shape))

    def bucketize(input, boundaries, out_int32, right, out):
        values = input if isinstance(input, xp.ndarray) else xp.asarray(input, dtype=boundaries.dtype)
        store(out, xp.searchsorted(boundaries, values, side="right" if right else "left").reshape(out.shape))

    # -- advanced indexing: integer arrays and masks, each index checked on the device first ------

    def key_of(input, indices) -> tuple:
        """An ``xp`` index for ``input``: None as a whole dim, masks as their coordinates, integer
        indices bounds-checked (one read back for all of them) before anything is read or written."""
        key: list[Any] = []
        checks = []
        for idx in indices:
            if idx is None:
                key.append(slice(None))
            elif idx.dtype.kind in "bu" and idx.dtype.itemsize == 1:
                key.extend(xp.nonzero(idx.astype(np.bool_)))
            else:
                dim = len(key)
                size = input.shape[dim]
                idx = idx.astype(np.int64)
                if idx.size:
                    checks.append((idx, dim, size))
                key.append(idx)
        if checks:
            bad_any = [xp.any((i >= size) | (i < -size)) for i, _, size in checks]
            flags = xp.stack(bad_any).tolist() if len(bad_any) > 1 else [bool(bad_any[0])]
            for (idx, dim, size), bad in zip(checks, flags):
                if bad:
                    value = int(idx[(idx >= size) | (idx < -size)].ravel()[0])
                    raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {size}")
        return tuple(key)

    def index(input, indices, out):
        store(out, input[key_of(input, indices)])

    def index_put(input, indices, values, accumulate, out):
        key = key_of(input, indices)
        if out is not input:
            store(out, input)
        vals = values if isinstance(values, xp.ndarray) else xp.asarray(values, dtype=out.dtype)
        if vals.dtype != out.dtype:
            vals = vals.astype(out.dtype)
        if accumulate:
            xp.add.at(out, key, vals)
        else:
            out[key] = vals

    # -- FFTs (cuFFT through cupy.fft; single precision stays single, as in PyTorch) ----------------

    real_of = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64),
               np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64)}

    def prepared(input, out):
        """The input in the output's precision (integers and bool become floats)."""
        want = real_of[out.dtype]
        if real_of.get(input.dtype) is want:
            return input
        return input.astype(want if input.dtype.kind != "c" else out.dtype)

    def complex_input(input, out):
        return prepared(input, out) if input.dtype.kind == "c" else input.astype(
            np.result_type(out.dtype, np.complex64))

    def fft_axes(s, dim, ndim):
        if isinstance(dim, int):
            dim = (dim,)
        if dim is None:
            return tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
        return tuple(d % ndim for d in dim)

    def c2c(name):
        def kernel(input, n, dim, norm, out):
            if out.size:
                store(out, getattr(xp.fft, name)(prepared(input, out), n, dim, norm or "backward"))
        kernel.__name__ = name
        return kernel

    def c2c_n(name):
        def kernel(input, s, dim, norm, out):
            x = prepared(input, out)
            axes = fft_axes(s, dim, out.ndim)
            if not axes:
                store(out, x)
            elif out.size:
                sizes = [out.shape[a] for a in axes]
                store(out, getattr(xp.fft, name)(x, sizes, axes, norm or "backward"))
        kernel.__name__ = name
        return kernel

    def fft_rfft(input, n, dim, norm, out):
        if out.size:
            store(out, xp.fft.rfft(prepared(input, out), n, dim, norm or "backward"))

    def fft_irfft(input, n, dim, norm, out):
        if out.size:
            store(out, xp.fft.irfft(complex_input(input, out), out.shape[dim], dim, norm or "backward"))

    def fft_rfftn(input, s, dim, norm, out):
        x = prepared(input, out)
        axes = fft_axes(s, dim, out.ndim)
        sizes = [x.shape[a] if s is None or s[i] == -1 else s[i] for i, a in enumerate(axes)]
        if out.size:
            store(out, xp.fft.rfftn(x, sizes, axes, norm or "backward"))

    def fft_irfftn(input, s, dim, norm, out):
        axes = fft_axes(s, dim, out.ndim)
        if out.size:
            store(out, xp.fft.irfftn(complex_input(input, out), [out.shape[a] for a in axes], axes,
                                     norm or "backward"))

    kernels: dict[str, Callable[..., Any]] = {name: unary(fn) for name, fn in _UNARY_SPECIAL.items()}
    kernels.update(fft_fft=c2c("fft"), fft_ifft=c2c("ifft"), fft_rfft=fft_rfft, fft_irfft=fft_irfft,
                   fft_fftn=c2c_n("fftn"), fft_ifftn=c2c_n("ifftn"), fft_rfftn=fft_rfftn, fft_irfftn=fft_irfftn)
    kernels.update({name: binary(fn) for name, fn in _BINARY_SPECIAL.items()})
    kernels.update(
        special_spherical_bessel_j0=special_spherical_bessel_j0, polygamma=polygamma, mvlgamma=mvlgamma,
        median=median, logit=logit, sinc=sinc,
        nextafter=nextafter, ldexp=ldexp, float_power=float_power, frexp=frexp, isclose=isclose,
        allclose=allclose, equal=equal, sort=sort, argsort=argsort, msort=msort, topk=topk, kthvalue=kthvalue,
        searchsorted=searchsorted, bucketize=bucketize, index=index, index_put=index_put,
    )
    return kernels

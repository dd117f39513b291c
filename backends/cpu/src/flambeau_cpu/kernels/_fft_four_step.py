"""One long complex FFT as many short ones (the "four-step" algorithm), so that it can use threads.

pocketfft vectorises and threads across the lines of a batch, but runs a single long transform on
one thread without SIMD: a 2^20-point complex64 FFT takes ~8 ms where PyTorch's takes ~2.5.
Writing n = n1 * n2, with input index j = n2 * a + b and output index k = c + n1 * d:

    X[c + n1 d] = sum_b  w_n2^(b d) * [ w_n^(b c) * sum_a x[n2 a + b] w_n1^(a c) ]

(w_m = exp(-+2 pi i / m)): n2 transforms of length n1 down the columns of x viewed as (n1, n2), a
pointwise twiddle, then n1 transforms of length n2 along the rows, written straight into the
transposed view of the output. Both passes are batched, so pocketfft vectorises and threads them;
the normalisation is folded into the twiddles.
"""
from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import numpy as np

#: Below this many points one direct transform is as fast.
MIN_POINTS = 1 << 16
_SCALE_CODES = {0: lambda n: 1.0, 1: lambda n: 1.0 / np.sqrt(n), 2: lambda n: 1.0 / n}


def split(n: int) -> int | None:
    """The column length n1 to use for an n-point transform, or None when n has no useful factor.

    About sqrt(n) / 4 measured fastest for 2^20 (256 x 4096: shorter columns are cheaper to gather).
    """
    target = int(np.sqrt(n)) // 4
    for n1 in range(target, 15, -1):
        if n % n1 == 0:
            return n1
    return None


@lru_cache(maxsize=4)
def _twiddles(n1: int, n2: int, forward: bool, inorm: int, dtype: np.dtype) -> np.ndarray:
    # (b * c) mod n keeps the angle exact in float64 however large the product.
    c = np.arange(n1, dtype=np.int64)[:, None]
    b = np.arange(n2, dtype=np.int64)[None, :]
    angle = (2.0 * np.pi / (n1 * n2)) * ((c * b) % (n1 * n2))
    tw = np.exp((-1j if forward else 1j) * angle) * _SCALE_CODES[inorm](n1 * n2)
    return tw.astype(dtype)


class _Scratch(threading.local):
    """The intermediate array of the last transform, per thread: a fresh 8 MB array for 2^20
    complex64 points would be fresh pages from the OS at every call (~0.5 ms of page faults)."""
    array: np.ndarray | None = None

    def get(self, shape: tuple[int, int], dtype: np.dtype) -> np.ndarray:
        a = self.array
        if a is None or a.shape != shape or a.dtype != dtype:
            a = self.array = np.empty(shape, dtype)
        return a


_scratch = _Scratch()


def c2c(binding: Any, x: np.ndarray, out: np.ndarray, forward: bool, inorm: int, nthreads: int) -> bool:
    """``out = fft(x)`` (or its inverse) for 1-d complex ``x`` and contiguous ``out`` of the same
    length; False, having written nothing, when the length does not split."""
    n = x.shape[0]
    n1 = split(n)
    if n1 is None or not out.flags.c_contiguous:
        return False
    n2 = n // n1
    step = x.strides[0]
    columns = np.lib.stride_tricks.as_strided(x, (n1, n2), (n2 * step, step), writeable=False)
    work = _scratch.get((n1, n2), out.dtype)
    binding.c2c(columns, (0,), forward, 0, work, nthreads)
    np.multiply(work, _twiddles(n1, n2, forward, inorm, out.dtype), out=work)
    binding.c2c(work, (1,), forward, 0, out.reshape(n2, n1).T, nthreads)
    return True

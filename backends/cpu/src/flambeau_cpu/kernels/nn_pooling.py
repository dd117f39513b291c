"""CPU kernels of flambeau-nn's pooling ops, run by ``flambeau_cpu._C`` (csrc/nn_pooling.cpp).

The backend never imports flambeau-nn: these are registered under the op names and used only when
that package declares the ops (whose meta functions have checked every size by then). The C++ code
works on planes ``(N * C, D, H, W)``: a 1-d or 2-d pool is handed over as a 3-d one with leading
spatial sizes of 1, which leaves flat indices within a plane unchanged. It takes C-contiguous
float32/float64 arrays, and integer ones where PyTorch pools integers (max pooling: uint8 to int64;
average pooling: int64), computed in their own type; float16/bfloat16 compute on float32 copies,
other layouts on contiguous copies, and results are written through working arrays where the
dispatcher's cannot be used. (The ops' meta functions refuse every other dtype before this runs.)
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)


def _work_dtype(a: np.ndarray) -> np.dtype:
    """The dtype the C++ kernels compute in: the array's own for float32/float64 and integers (exact),
    float32 for the half types."""
    return a.dtype if a.dtype in (_F32, _F64) or a.dtype.kind in "iu" else _F32


def _arr(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def _target(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dtype)


def _store(out: np.ndarray, work: np.ndarray) -> None:
    if work is not out:
        np.copyto(out, work.reshape(out.shape), casting="unsafe")


def _three(values: Sequence[int], fill: int) -> list[int]:
    """Sizes of 1 to 3 spatial dims as 3 (leading dims of ``fill``)."""
    return [fill] * (3 - len(values)) + [int(v) for v in values]


def _planes(shape: Sequence[int]) -> int:
    return int(shape[0]) * int(shape[1])


def nn_max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, out):
    values, indices = out
    if values.size == 0:
        return
    dt = _work_dtype(input)
    y, ind = _target(values, dt), _target(indices, _I64)
    _C.nn_max_pool(_arr(input, dt), y, ind, _planes(input.shape), _three(input.shape[2:], 1),
                   _three(values.shape[2:], 1), _three(kernel_size, 1), _three(stride, 1), _three(padding, 0),
                   _three(dilation, 1))
    _store(values, y)
    _store(indices, ind)


def _scatter(fn: Callable[..., Any], src: np.ndarray, indices: np.ndarray, out: np.ndarray, what: str) -> None:
    dt = _work_dtype(src)
    dst = _target(out, dt)
    src_plane = math.prod(src.shape[2:])
    dst_plane = math.prod(out.shape[2:])
    bad, index = fn(_arr(src, dt), _arr(indices, _I64), dst, _planes(src.shape), src_plane, dst_plane)
    if bad:
        spatial = list(out.shape[2:]) + ([1] if out.ndim == 3 else [])  # PyTorch pools 1-d as (L, 1)
        sizes = "x".join(str(s) for s in spatial)
        raise RuntimeError(f"Found an invalid max index: {index} ({what} volumes are of size {sizes})")
    _store(out, dst)


def nn_max_pool_backward(grad_out, indices, input_size, out):
    if grad_out.size == 0:
        out.fill(0)
        return
    _scatter(_C.nn_max_pool_backward, grad_out, indices, out, "input")


def nn_max_unpool(input, indices, output_size, out):
    if input.size == 0:
        out.fill(0)
        return
    _scatter(_C.nn_max_unpool, input, indices, out, "output")


def _divisor(divisor_override: Any) -> int:
    return 0 if divisor_override is None else int(divisor_override)


def nn_avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out):
    if out.size == 0:
        return
    dt = _work_dtype(input)
    y = _target(out, dt)
    _C.nn_avg_pool(_arr(input, dt), y, _planes(input.shape), _three(input.shape[2:], 1), _three(out.shape[2:], 1),
                   _three(kernel_size, 1), _three(stride, 1), _three(padding, 0), bool(count_include_pad),
                   _divisor(divisor_override))
    _store(out, y)


def nn_avg_pool_backward(grad_out, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override, out):
    if out.size == 0:
        return
    dt = _work_dtype(grad_out)
    gi = _target(out, dt)
    _C.nn_avg_pool_backward(_arr(grad_out, dt), gi, _planes(out.shape), _three(out.shape[2:], 1),
                            _three(grad_out.shape[2:], 1), _three(kernel_size, 1), _three(stride, 1),
                            _three(padding, 0), bool(count_include_pad), _divisor(divisor_override))
    _store(out, gi)


def _channels_last_mean(input: np.ndarray, out: np.ndarray, dt: np.dtype) -> bool:
    """Global average pooling (output size 1) of a channels-last input, read in place; False if the
    input is not channels-last.

    Moving the channels last makes such an input C-contiguous ``(N, positions, C)``: the sum over
    positions adds whole rows of C values (vectorised), where the window kernel would need a
    contiguous copy first (measured, one thread, (8, 64, 16, 16): 62 us against 136 us; (8, 512,
    2, 2): 9 us against 35 us). Contiguous inputs stay on the window kernel, which beats
    ``np.mean`` over trailing axes (25 us against 52 us; 8 us against 108 us)."""
    rows = np.moveaxis(input, 1, -1)
    if input.ndim < 3 or input.flags.c_contiguous or not rows.flags.c_contiguous:
        return False
    n, c = input.shape[:2]
    total = np.add.reduce(rows.reshape(n, -1, c), axis=1, dtype=dt)
    np.multiply(total, dt.type(1.0 / math.prod(input.shape[2:])), out=total)
    np.copyto(out, total.reshape(out.shape), casting="unsafe")
    return True


def nn_adaptive_avg_pool(input, output_size, out):
    if out.size == 0:
        return
    dt = _work_dtype(input)
    if math.prod(out.shape[2:]) == 1 and input.size and _channels_last_mean(input, out, dt):
        return
    y = _target(out, dt)
    _C.nn_adaptive_avg_pool(_arr(input, dt), y, _planes(input.shape), _three(input.shape[2:], 1),
                            _three(out.shape[2:], 1))
    _store(out, y)


def nn_adaptive_avg_pool_backward(grad_out, input_size, out):
    if out.size == 0:
        return
    dt = _work_dtype(grad_out)
    if grad_out.size == 0:  # no output elements: nothing flows back
        out.fill(0)
        return
    gi = _target(out, dt)
    _C.nn_adaptive_avg_pool_backward(_arr(grad_out, dt), gi, _planes(out.shape), _three(out.shape[2:], 1),
                                     _three(grad_out.shape[2:], 1))
    _store(out, gi)


def nn_adaptive_max_pool(input, output_size, out):
    values, indices = out
    if values.size == 0:
        return
    dt = _work_dtype(input)
    y, ind = _target(values, dt), _target(indices, _I64)
    _C.nn_adaptive_max_pool(_arr(input, dt), y, ind, _planes(input.shape), _three(input.shape[2:], 1),
                            _three(values.shape[2:], 1))
    _store(values, y)
    _store(indices, ind)


KERNELS: dict[str, Callable[..., Any]] = (
    {"nn_max_pool": nn_max_pool, "nn_max_pool_backward": nn_max_pool_backward, "nn_max_unpool": nn_max_unpool,
     "nn_avg_pool": nn_avg_pool, "nn_avg_pool_backward": nn_avg_pool_backward,
     "nn_adaptive_avg_pool": nn_adaptive_avg_pool, "nn_adaptive_avg_pool_backward": nn_adaptive_avg_pool_backward,
     "nn_adaptive_max_pool": nn_adaptive_max_pool}
    if hasattr(_C, "nn_max_pool") else {}  # an extension built before these kernels existed
)

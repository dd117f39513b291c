"""Pooling written with flambeau ops: the composites of the pooling ops, which every backend runs.

Every pooling op works on planes: input ``(N, C, *spatial)`` with 1 to 3 spatial dims. A composite
lists, for each output element, the flat positions (within its input plane) of its window, as an
``(outputs, window)`` table of int64 built from the sizes alone (numpy, on the host: it depends on
no data); positions outside the input point at one extra element appended to each plane (the
padding value: -inf for max, 0 for average). One ``gather`` then reads every window, and a
reduction over the last dim pools it. Backward passes scatter through the same tables.

Integer inputs (max pooling: uint8 to int64; average pooling: int64) pool in their own dtype, as
PyTorch's kernels do: the max's padding value is the dtype's lowest, and an int64 average is the
window's (wrapping) sum divided truncating toward zero.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

import flambeau as fb
from flambeau import Tensor


# -- output sizes (shared with the meta functions) -----------------------------------------------------

def pool_out_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: with ``ceil_mode`` a last window that would start in the
    right padding (at or past ``size + pad``) is dropped."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1  # floor division, as PyTorch's div_rtn
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def adaptive_bounds(o: int, size: int, out: int) -> tuple[int, int]:
    """Output ``o`` of ``out`` covers ``[floor(o * size / out), ceil((o + 1) * size / out))``."""
    return (o * size) // out, -((-(o + 1) * size) // out)


# -- window tables ------------------------------------------------------------------------------------

def _combine(coords: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-dim ``(out_d, k_d)`` coordinates (-1: outside the input) to an ``(outputs, window)`` table of
    flat positions, and the table's validity mask."""
    nd = len(coords)
    flat = np.zeros([c.shape[0] for c in coords] + [c.shape[1] for c in coords], dtype=np.int64)
    valid = np.ones(flat.shape, dtype=bool)
    for d, c in enumerate(coords):
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = c.shape
        c = c.reshape(shape)
        flat = flat * sizes[d] + c
        valid &= c >= 0
    outputs = math.prod(c.shape[0] for c in coords)
    return flat.reshape(outputs, -1), valid.reshape(outputs, -1)


def _pool_coords(size: int, out: int, kernel: int, stride: int, pad: int, dilation: int) -> np.ndarray:
    c = (np.arange(out)[:, None] * stride - pad + np.arange(kernel)[None, :] * dilation).astype(np.int64)
    c[(c < 0) | (c >= size)] = -1
    return c


def _adaptive_coords(size: int, out: int) -> np.ndarray:
    bounds = [adaptive_bounds(o, size, out) for o in range(out)]
    width = max((hi - lo for lo, hi in bounds), default=1)
    c = np.full((out, max(width, 1)), -1, dtype=np.int64)
    for o, (lo, hi) in enumerate(bounds):
        c[o, :hi - lo] = np.arange(lo, hi)
    return c


def _planes(input: Tensor) -> tuple[int, int, int]:
    n, c = input.shape[0], input.shape[1]
    return n, c, math.prod(input.shape[2:])


def _gather_windows(input: Tensor, table: np.ndarray, valid: np.ndarray, fill: float) -> Tensor:
    """``(N, C, outputs, window)``: each window's elements, ``fill`` where outside the input."""
    n, c, p = _planes(input)
    outputs, window = table.shape
    where = np.where(valid, table, p)
    flat = fb.cat([input.reshape(n, c, p), fb.full((n, c, 1), fill, dtype=input.dtype, device=input.device)], 2)
    index = fb.tensor(where.reshape(1, 1, -1), device=input.device).expand(n, c, outputs * window)
    return flat.gather(2, index).reshape(n, c, outputs, window)


def _max_over_windows(input: Tensor, table: np.ndarray, valid: np.ndarray, out_sizes: Sequence[int]
                      ) -> tuple[Tensor, Tensor]:
    n, c = input.shape[0], input.shape[1]
    outputs, window = table.shape
    floating = input.dtype.is_floating_point
    windows = _gather_windows(input, table, valid, -math.inf if floating else fb.iinfo(input.dtype).min)
    best = windows.argmax(-1, keepdim=True)
    if floating:
        # PyTorch's kernels take an element when greater or NaN: the last NaN of a window wins.
        nan = windows.isnan()
        last_nan = (window - 1) - nan.flip(-1).to(fb.int64).argmax(-1, keepdim=True)
        best = fb.where(nan.any(-1, keepdim=True), last_nan, best)
    values = windows.gather(3, best).reshape((n, c) + tuple(out_sizes))
    # An element outside the input only wins when the whole window is -inf (the lowest integer): the
    # index is then the window's first position inside the input, as PyTorch's kernels give it.
    first = np.where(valid.any(1), table[np.arange(outputs), valid.argmax(1)], 0)
    positions = np.where(valid, table, first[:, None])
    pos = fb.tensor(positions.reshape(1, 1, outputs, window), device=input.device).expand(n, c, outputs, window)
    return values, pos.gather(3, best).reshape((n, c) + tuple(out_sizes))


def _pool_table(in_sizes, out_sizes, kernel_size, stride, padding, dilation):
    coords = [_pool_coords(*a) for a in zip(in_sizes, out_sizes, kernel_size, stride, padding, dilation)]
    return _combine(coords, in_sizes)


def pool_out_sizes(in_sizes, kernel_size, stride, padding, dilation, ceil_mode) -> tuple[int, ...]:
    return tuple(pool_out_size(*a, ceil_mode) for a in zip(in_sizes, kernel_size, stride, padding, dilation))


# -- composites ---------------------------------------------------------------------------------------

def max_pool(input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> tuple[Tensor, Tensor]:
    in_sizes = tuple(input.shape[2:])
    out_sizes = pool_out_sizes(in_sizes, kernel_size, stride, padding, dilation, ceil_mode)
    table, valid = _pool_table(in_sizes, out_sizes, kernel_size, stride, padding, dilation)
    return _max_over_windows(input, table, valid, out_sizes)


def _check_indices(indices: Tensor, plane_sizes, what: str) -> None:
    """PyTorch's error for a max index outside its plane (checked on the values: a host sync, on the
    composite path only), before the scatter would report it in its own words."""
    plane = math.prod(plane_sizes)
    if indices.numel() == 0 or not bool(((indices < 0) | (indices >= plane)).any()):
        return
    index = next(v for v in indices.reshape(-1).tolist() if v < 0 or v >= plane)
    spatial = list(plane_sizes) + ([1] if len(plane_sizes) == 1 else [])  # PyTorch pools 1-d as (L, 1)
    raise RuntimeError(f"Found an invalid max index: {index} ({what} volumes are of size "
                       f"{'x'.join(str(s) for s in spatial)})")


def max_pool_backward(grad_out: Tensor, indices: Tensor, input_size) -> Tensor:
    _check_indices(indices, tuple(input_size), "input")
    n, c, p = _planes(grad_out)
    zeros = fb.zeros((n, c, math.prod(input_size)), dtype=grad_out.dtype, device=grad_out.device)
    return zeros.scatter_add(2, indices.reshape(n, c, p), grad_out.reshape(n, c, p)).reshape(
        (n, c) + tuple(input_size))


def max_unpool(input: Tensor, indices: Tensor, output_size) -> Tensor:
    _check_indices(indices, tuple(output_size), "output")
    n, c, p = _planes(input)
    zeros = fb.zeros((n, c, math.prod(output_size)), dtype=input.dtype, device=input.device)
    return zeros.scatter(2, indices.reshape(n, c, p), input.reshape(n, c, p)).reshape((n, c) + tuple(output_size))


def _avg_divisors(in_sizes, out_sizes, kernel_size, stride, padding, count_include_pad, divisor_override):
    """Each output's divisor, as PyTorch's kernels compute it (1 for a window with no input element,
    whose sum is 0)."""
    per_dim = []
    for size, out, k, s, p in zip(in_sizes, out_sizes, kernel_size, stride, padding):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, size + p)
        padded = end - start
        inside = np.minimum(end, size) - np.maximum(start, 0)
        per_dim.append((padded, np.maximum(inside, 0)))
    padded = inside = np.ones((), dtype=np.int64)
    for pd, ins in per_dim:
        padded = np.multiply.outer(padded, pd)
        inside = np.multiply.outer(inside, ins)
    if divisor_override:
        div = np.full(inside.shape, divisor_override, dtype=np.int64)
    else:
        div = padded if count_include_pad else inside
    return np.where(inside > 0, div, 1).reshape(-1)


def avg_pool(input: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) -> Tensor:
    in_sizes = tuple(input.shape[2:])
    ones = (1,) * len(in_sizes)
    out_sizes = pool_out_sizes(in_sizes, kernel_size, stride, padding, ones, ceil_mode)
    table, valid = _pool_table(in_sizes, out_sizes, kernel_size, stride, padding, ones)
    sums = _gather_windows(input, table, valid, 0).sum(-1)
    div = _avg_divisors(in_sizes, out_sizes, kernel_size, stride, padding, count_include_pad, divisor_override)
    n, c = input.shape[0], input.shape[1]
    if not input.dtype.is_floating_point:  # int64: truncating division of the wrapped sum
        if divisor_override == -1:  # negation wraps INT64_MIN to itself, where INT64_MIN // -1 would trap
            return (-sums).reshape((n, c) + out_sizes)
        divisor = fb.tensor(div, dtype=input.dtype, device=input.device)
        return sums.div(divisor, rounding_mode="trunc").reshape((n, c) + out_sizes)
    return (sums / fb.tensor(div.astype(np.float64), dtype=input.dtype, device=input.device)).reshape(
        (n, c) + out_sizes)


def _scatter_windows(grad: Tensor, table: np.ndarray, valid: np.ndarray, in_sizes) -> Tensor:
    """The adjoint of :func:`_gather_windows`: ``grad`` ``(N, C, outputs)`` added into each window."""
    n, c = grad.shape[0], grad.shape[1]
    outputs, window = table.shape
    p = math.prod(in_sizes)
    where = np.where(valid, table, p)
    index = fb.tensor(where.reshape(1, 1, -1), device=grad.device).expand(n, c, outputs * window)
    src = grad.reshape(n, c, outputs, 1).expand(n, c, outputs, window).reshape(n, c, outputs * window)
    zeros = fb.zeros((n, c, p + 1), dtype=grad.dtype, device=grad.device)
    return zeros.scatter_add(2, index, src).narrow(2, 0, p).reshape((n, c) + tuple(in_sizes))


def avg_pool_backward(grad_out: Tensor, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override) -> Tensor:
    in_sizes = tuple(input_size)
    ones = (1,) * len(in_sizes)
    out_sizes = pool_out_sizes(in_sizes, kernel_size, stride, padding, ones, ceil_mode)
    table, valid = _pool_table(in_sizes, out_sizes, kernel_size, stride, padding, ones)
    div = _avg_divisors(in_sizes, out_sizes, kernel_size, stride, padding, count_include_pad, divisor_override)
    n, c = grad_out.shape[0], grad_out.shape[1]
    scaled = grad_out.reshape(n, c, -1) / fb.tensor(div.astype(np.float64), dtype=grad_out.dtype,
                                                    device=grad_out.device)
    return _scatter_windows(scaled, table, valid, in_sizes)


def _adaptive_table(in_sizes, out_sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    table, valid = _combine([_adaptive_coords(i, o) for i, o in zip(in_sizes, out_sizes)], in_sizes)
    return table, valid, np.maximum(valid.sum(1), 1)


def adaptive_avg_pool(input: Tensor, output_size) -> Tensor:
    in_sizes, out_sizes = tuple(input.shape[2:]), tuple(output_size)
    table, valid, counts = _adaptive_table(in_sizes, out_sizes)
    n, c = input.shape[0], input.shape[1]
    sums = _gather_windows(input, table, valid, 0.0).sum(-1)
    return (sums / fb.tensor(counts.astype(np.float64), dtype=input.dtype, device=input.device)).reshape(
        (n, c) + out_sizes)


def adaptive_avg_pool_backward(grad_out: Tensor, input_size) -> Tensor:
    in_sizes, out_sizes = tuple(input_size), tuple(grad_out.shape[2:])
    table, valid, counts = _adaptive_table(in_sizes, out_sizes)
    n, c = grad_out.shape[0], grad_out.shape[1]
    scaled = grad_out.reshape(n, c, -1) / fb.tensor(counts.astype(np.float64), dtype=grad_out.dtype,
                                                    device=grad_out.device)
    return _scatter_windows(scaled, table, valid, in_sizes)


def adaptive_max_pool(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    in_sizes, out_sizes = tuple(input.shape[2:]), tuple(output_size)
    table, valid, _ = _adaptive_table(in_sizes, out_sizes)
    return _max_over_windows(input, table, valid, out_sizes)

"""Declarations of flambeau-nn's pooling (max, average, adaptive, fractional, LP, unpooling) ops.

The ops are N-d (1 to 3 spatial dims, from the length of ``kernel_size`` or ``output_size``) and take
batched input ``(N, C, *spatial)``; the functional forms add the batch dim for unbatched input and
normalize the size arguments to tuples. Indices are PyTorch's: the flat position of the element
within its input plane. ``nn_max_pool_backward`` scatters a gradient through such indices, so it is
also the backward of adaptive and fractional max pooling. Each op has a composite (``_pool_math``).

Dtypes are PyTorch's (CPU): every op takes the floating types; max pooling also takes uint8, int8,
int16, int32 and int64, and average pooling int64 (its sum wrapping, its division truncating, as
PyTorch's kernel does). Other dtypes are refused as PyTorch's kernels refuse them: a
NotImplementedError naming its kernel, raised after the size checks, as PyTorch's dispatch comes
after them.
"""
from __future__ import annotations

from typing import Any, Sequence

import flambeau as fb
from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape, type_name

from . import _pool_math as M


#: The integer dtypes PyTorch's max pooling kernels take (not bool, nor complex).
MAX_POOL_INTS = frozenset({fb.uint8, fb.int8, fb.int16, fb.int32, fb.int64})
#: The integer dtypes PyTorch's average pooling kernels take.
AVG_POOL_INTS = frozenset({fb.int64})


def _check_float(op: str, input: Tensor) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{type_name(input.dtype)}\'')


def check_kernel_dtype(kernel: str, input: Tensor, ints: frozenset = frozenset()) -> None:
    """PyTorch's refusal of a dtype its kernel ``kernel`` is not built for (floating types and ``ints``
    are)."""
    if not (input.dtype.is_floating_point or input.dtype in ints):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input.dtype)}\'')


def _kernel(name2d: str, name3d: str, k: int) -> str:
    """The name PyTorch's CPU kernel reports (1-d pooling runs the 2-d kernel)."""
    return name3d if k == 3 else name2d


def _sizes(op: str, name: str, value: Any, k: int, low: int | None = None) -> tuple[int, ...]:
    """``value`` as ``k`` ints (at least ``low`` when given)."""
    try:
        t = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a tuple of {k} ints, not {type(value).__name__}") from None
    if len(t) != k:
        raise ValueError(f"{op}: {name} must have {k} entries, got {len(t)}")
    if low is not None and any(v < low for v in t):
        raise RuntimeError(f"{op}: {name} must be at least {low}, got {list(t)}")
    return t


def _batched(op: str, input: Tensor, k: int) -> None:
    if input.dim() != k + 2:
        raise RuntimeError(f"{op}: expected a {k + 2}D input (N, C, *spatial), got {input.dim()}D of size "
                           f"{fmt_shape(input.shape)}")


def _name(kind: str, k: int) -> str:
    return f"{kind}{k}d"


def check_pool_geometry(op: str, in_sizes: Sequence[int], kernel_size: Sequence[int], stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool,
                        plane_label: str) -> tuple[int, ...]:
    """PyTorch's checks of a pooling geometry, in its order; returns the output sizes.

    ``plane_label`` is the leading "C" of the sizes PyTorch names ("3" in "(3x2x2)")."""
    k = len(kernel_size)
    names = ("T", "H", "W")[3 - k:]
    if any(v == 0 for v in stride):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in kernel_size):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{n}: {v}" for n, v in zip(names, kernel_size)))
    if any(v <= 0 for v in stride):
        raise RuntimeError("stride should be greater than zero, but got "
                           + " ".join(f"d{n}: {v}" for n, v in zip(names, stride)))
    if any(v <= 0 for v in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{n}: {v}" for n, v in zip(names, dilation)))
    for ks, p, d in zip(kernel_size, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((ks - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={ks} and dilation={d}")
    if any(p > ks // 2 for ks, p in zip(kernel_size, padding)):
        # PyTorch names the sizes innermost first: padW, padH (padT), then kW, kH (kT)
        pads = ", ".join(f"pad{n} = {v}" for n, v in zip(names[::-1], padding[::-1]))
        kernels = ", ".join(f"k{n} = {v}" for n, v in zip(names[::-1], kernel_size[::-1]))
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got {pads}, {kernels}")
    out = M.pool_out_sizes(in_sizes, kernel_size, stride, padding, dilation, ceil_mode)
    if any(o < 1 for o in out):
        given = "x".join(str(s) for s in (plane_label, *in_sizes))
        calc = "x".join(str(s) for s in (plane_label, *out))
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calc}). Output size is too small")
    return out


def _max_pool_meta(input, kernel_size, stride, padding, dilation, ceil_mode):
    k = len(kernel_size)
    op = _name("max_pool", k)
    _batched(op, input, k)
    ks = _sizes(op, "kernel_size", kernel_size, k)
    out = check_pool_geometry(op, tuple(input.shape[2:]), ks, _sizes(op, "stride", stride, k),
                              _sizes(op, "padding", padding, k), _sizes(op, "dilation", dilation, k),
                              bool(ceil_mode), str(input.shape[1]))
    check_kernel_dtype(_kernel("max_pool2d", "max_pool3d", k), input, MAX_POOL_INTS)
    shape = tuple(input.shape[:2]) + out
    return [(shape, input.dtype), (shape, fb.int64)]


def _indices_like(op: str, values: Tensor, indices: Tensor, what: str) -> None:
    if indices.dtype != fb.int64:
        raise RuntimeError(f"{op}: expected indices to have type Long, but got {type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(values.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the {what}, but got indices of size "
                           f"{fmt_shape(indices.shape)} and {what} of size {fmt_shape(values.shape)}")


def _max_pool_backward_meta(grad_out, indices, input_size):
    op = "max_pool_backward"
    _check_float(op, grad_out)
    if grad_out.dim() < 3 or grad_out.dim() > 5:
        raise RuntimeError(f"{op}: expected a 3D to 5D grad_out, got {grad_out.dim()}D")
    size = _sizes(op, "input_size", input_size, grad_out.dim() - 2, 0)
    _indices_like(op, grad_out, indices, "grad_out")
    return tuple(grad_out.shape[:2]) + size, grad_out.dtype


def _max_unpool_meta(input, indices, output_size):
    k = input.dim() - 2
    op = _name("max_unpool", k)
    if k < 1 or k > 3:
        raise RuntimeError(f"{op}: expected a 3D to 5D input, got {input.dim()}D")
    size = _sizes(op, "output_size", output_size, k, 0)
    _indices_like(op, input, indices, "input")
    check_kernel_dtype(_kernel("max_unpool2d", "max_unpool3d", k), input)
    return tuple(input.shape[:2]) + size, input.dtype


def _avg_geometry(op, in_sizes, kernel_size, stride, padding, ceil_mode, divisor_override, channels):
    k = len(kernel_size)
    ks = _sizes(op, "kernel_size", kernel_size, k)
    if divisor_override is not None and (isinstance(divisor_override, bool) or int(divisor_override) == 0):
        raise RuntimeError("divisor must be not zero")
    return check_pool_geometry(op, in_sizes, ks, _sizes(op, "stride", stride, k),
                               _sizes(op, "padding", padding, k), (1,) * k, bool(ceil_mode), channels)


def _avg_pool_meta(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k = len(kernel_size)
    op = _name("avg_pool", k)
    _batched(op, input, k)
    out = _avg_geometry(op, tuple(input.shape[2:]), kernel_size, stride, padding, ceil_mode, divisor_override,
                        str(input.shape[1]))
    check_kernel_dtype(_kernel("avg_pool2d", "avg_pool3d_out_frame", k), input, AVG_POOL_INTS)
    return tuple(input.shape[:2]) + out, input.dtype


def _avg_pool_backward_meta(grad_out, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override):
    k = len(kernel_size)
    op = _name("avg_pool", k) + "_backward"
    _check_float(op, grad_out)
    _batched(op, grad_out, k)
    size = _sizes(op, "input_size", input_size, k, 0)
    out = _avg_geometry(op, size, kernel_size, stride, padding, ceil_mode, divisor_override, str(grad_out.shape[1]))
    if tuple(grad_out.shape[2:]) != out:
        raise RuntimeError(f"{op}: grad_out of size {fmt_shape(grad_out.shape)} does not match the output size "
                           f"{fmt_shape(tuple(grad_out.shape[:2]) + out)}")
    return tuple(grad_out.shape[:2]) + size, grad_out.dtype


def _adaptive_meta(kind: str, input: Tensor, output_size: Any) -> tuple[int, ...]:
    k = len(output_size)
    op = _name(kind, k)
    _batched(op, input, k)
    size = _sizes(op, "output_size", output_size, k)
    if any(s < 0 for s in size):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(str(s) for s in size)}}}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {fmt_shape(input.shape)} with dimension {d} being empty")
    check_kernel_dtype(_kernel(f"{kind}2d", f"{kind}3d_cpu", k), input)
    return tuple(input.shape[:2]) + size


def _adaptive_avg_pool_meta(input, output_size):
    return _adaptive_meta("adaptive_avg_pool", input, output_size), input.dtype


def _adaptive_avg_pool_backward_meta(grad_out, input_size):
    k = len(input_size)
    op = _name("adaptive_avg_pool", k) + "_backward"
    _check_float(op, grad_out)
    _batched(op, grad_out, k)
    size = _sizes(op, "input_size", input_size, k, 1)
    return tuple(grad_out.shape[:2]) + size, grad_out.dtype


def _adaptive_max_pool_meta(input, output_size):
    shape = _adaptive_meta("adaptive_max_pool", input, output_size)
    return [(shape, input.dtype), (shape, fb.int64)]


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    with_indices = ("output", "indices")
    geometry = "kernel_size, stride, padding"
    avg_opts = "ceil_mode=False, count_include_pad=True, divisor_override=None"
    return [
        OpDecl("nn_max_pool", f"(input: Tensor, {geometry}, dilation, ceil_mode=False)", _max_pool_meta,
               composite=M.max_pool, output_names=with_indices,
               doc="Max pooling over 1 to 3 spatial dims: ``(output, indices)``, indices flat within each "
                   "input plane. NaN is the max of any window holding one.", **common),
        OpDecl("nn_max_pool_backward", "(grad_out: Tensor, indices: Tensor, input_size)", _max_pool_backward_meta,
               composite=M.max_pool_backward,
               doc="``grad_out`` added into zeroed planes of ``input_size`` at ``indices`` (flat within each "
                   "plane): the input gradient of max, adaptive max and fractional max pooling.", **common),
        OpDecl("nn_max_unpool", "(input: Tensor, indices: Tensor, output_size)", _max_unpool_meta,
               composite=M.max_unpool,
               doc="``input`` written into zeroed planes of ``output_size`` at ``indices`` (flat within each "
                   "plane).", **common),
        OpDecl("nn_avg_pool", f"(input: Tensor, {geometry}, {avg_opts})", _avg_pool_meta, composite=M.avg_pool,
               doc="Average pooling over 1 to 3 spatial dims.", **common),
        OpDecl("nn_avg_pool_backward", f"(grad_out: Tensor, input_size, {geometry}, {avg_opts})",
               _avg_pool_backward_meta, composite=M.avg_pool_backward,
               doc="The input gradient of ``nn_avg_pool`` (its adjoint).", **common),
        OpDecl("nn_adaptive_avg_pool", "(input: Tensor, output_size)", _adaptive_avg_pool_meta,
               composite=M.adaptive_avg_pool, doc="Adaptive average pooling over 1 to 3 spatial dims.", **common),
        OpDecl("nn_adaptive_avg_pool_backward", "(grad_out: Tensor, input_size)", _adaptive_avg_pool_backward_meta,
               composite=M.adaptive_avg_pool_backward, doc="The input gradient of ``nn_adaptive_avg_pool``.",
               **common),
        OpDecl("nn_adaptive_max_pool", "(input: Tensor, output_size)", _adaptive_max_pool_meta,
               composite=M.adaptive_max_pool, output_names=with_indices,
               doc="Adaptive max pooling over 1 to 3 spatial dims: ``(output, indices)``.", **common),
    ]

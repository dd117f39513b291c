"""Functional forms: pooling (max, average, adaptive, fractional, LP, unpooling).

Each form checks and normalizes its arguments as PyTorch does (an int or a tuple per spatial dim;
``stride=None`` meaning the kernel size), adds the batch dim to unbatched input and calls the N-d
pooling op (``nn_max_pool``, ``nn_avg_pool``, ...), which every backend runs (the CPU one through
C++ kernels). LP pooling and fractional max pooling are compositions of flambeau ops.

Dtypes follow PyTorch on the CPU (see ``flambeau.nn._ops.pooling``): max pooling takes the integer
types but bool, average pooling int64; the quirks of PyTorch's CPU entry points are kept too
(``max_pool1d`` without indices refuses integers on the CPU, adaptive average pooling to size 1
is ``mean``, which refuses them with its own message).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import flambeau as fb
from flambeau import Tensor

from flambeau.ops.meta import type_name as _type_name

from .._lazy import LazyOp
from .activation import relu

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d",
]

_max_pool = LazyOp("nn_max_pool")
_max_unpool = LazyOp("nn_max_unpool")
_avg_pool = LazyOp("nn_avg_pool")
_adaptive_avg_pool = LazyOp("nn_adaptive_avg_pool")
_adaptive_max_pool = LazyOp("nn_adaptive_max_pool")

_COUNT = {1: "a single int", 2: "a tuple of two ints", 3: "a tuple of three ints"}


# -- argument handling --------------------------------------------------------------------------------

def _tuple(value: Any, k: int, op: str, name: str, omittable: bool = False) -> tuple[int, ...]:
    """``value`` (an int, or a sequence of 1 or ``k`` ints) as ``k`` ints, else PyTorch's error."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (int(value),) * k
    seq = list(value)
    if len(seq) == 1:
        return (int(seq[0]),) * k
    if len(seq) == k:
        return tuple(int(v) for v in seq)
    if k == 1:
        raise RuntimeError(f"{op}() {name} must be an int, list of ints or tuple of ints of size 1 but got size "
                           f"{len(seq)}")
    verb = "be either" if name == "dilation" else "either be"
    omit = "omitted, " if omittable else ""
    raise RuntimeError(f"{op}: {name} must {verb} {omit}a single int, or {_COUNT[k]}")


def _stride(stride: Any, kernel: tuple[int, ...], k: int, op: str) -> tuple[int, ...]:
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return kernel
    return _tuple(stride, k, op, "stride", omittable=True)


def _check_rank(input: Tensor, k: int, op: str) -> bool:
    """True when ``input`` is unbatched (k + 1 dims); raises PyTorch's error unless it has k + 1 or k + 2."""
    dim = input.dim()
    if dim not in (k + 1, k + 2):
        if op == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{list(input.shape)}")
        if k == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor for argument #1 'self' "
                               f"(while checking arguments for {op})")
        raise RuntimeError(f"non-empty {k + 1}D or {k + 2}D (batch mode) tensor expected for input")
    return dim == k + 1


def _batch(input: Tensor, unbatched: bool) -> Tensor:
    return input.unsqueeze(0) if unbatched else input


def _unbatch(t: Tensor, unbatched: bool) -> Tensor:
    return t.squeeze(0) if unbatched else t


# -- max pooling --------------------------------------------------------------------------------------

def _max_pool_nd(k: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                 ceil_mode: bool) -> tuple[Tensor, Tensor]:
    op = f"max_pool{k}d"
    ks = _tuple(kernel_size, k, op, "kernel_size")
    st = _stride(stride, ks, k, op)
    pad = _tuple(padding, k, op, "padding")
    dil = _tuple(dilation, k, op, "dilation")
    unbatched = _check_rank(input, k, op)
    values, indices = _max_pool(_batch(input, unbatched), ks, st, pad, dil, bool(ceil_mode))
    return _unbatch(values, unbatched), _unbatch(indices, unbatched)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""1-d max pooling, returning ``(output, indices)``. See :func:`max_pool1d`."""
    return _max_pool_nd(1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""2-d max pooling, returning ``(output, indices)``. See :func:`max_pool2d`."""
    return _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""3-d max pooling, returning ``(output, indices)``. See :func:`max_pool3d`."""
    return _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    r"""1-d max pooling over an input ``(N, C, L)`` or ``(C, L)``.

    Args:
        kernel_size: the window size.
        stride: the window step (default: ``kernel_size``).
        padding: implicit -inf padding on both sides, at most half the kernel size.
        dilation: the step between elements of a window.
        ceil_mode: round the output size up (a last window starting in the right padding is dropped).
        return_indices: also return the flat index of each max within its input plane.
    """
    out = _max_pool_nd(1, input, kernel_size, stride, padding, dilation, ceil_mode)
    if not return_indices and input.device.type == "cpu" and not input.dtype.is_floating_point:
        # PyTorch's CPU max_pool1d without indices runs a float-only kernel (after the size checks,
        # done above); with indices, and on other devices, it runs max_pool2d's, which takes integers.
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for \'{_type_name(input.dtype)}\'')
    return out if return_indices else out[0]


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    r"""2-d max pooling over an input ``(N, C, H, W)`` or ``(C, H, W)``.

    See :class:`~flambeau.nn.MaxPool2d` for the arguments. NaN in a window is its max.
    """
    out = _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    r"""3-d max pooling over an input ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    See :class:`~flambeau.nn.MaxPool3d` for the arguments.
    """
    out = _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


# -- max unpooling ------------------------------------------------------------------------------------

def _unpool_output_size(input: Tensor, kernel_size: tuple[int, ...], stride: tuple[int, ...],
                        padding: tuple[int, ...], output_size: Any) -> tuple[int, ...]:
    """PyTorch's ``_unpool_output_size``: the default, or ``output_size`` checked against it."""
    k = len(kernel_size)
    spatial = tuple(input.shape[input.dim() - k:])
    default = tuple((spatial[d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(k))
    if output_size is None:
        return default
    given = output_size.tolist() if isinstance(output_size, Tensor) else output_size
    if len(given) == k + 2:
        given = given[2:]
    elif len(given) == k + 1:  # unbatched: (C, *spatial)
        given = given[1:]
    if len(given) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                         f"length of '{len(given)}'")
    for d in range(k):
        min_size = default[d] - stride[d]
        max_size = default[d] + stride[d]
        if not min_size < int(given[d]) < max_size:
            raise ValueError(f'invalid output_size "{given}" (dim {d} must be between {min_size} and {max_size})')
    return tuple(int(v) for v in given)


def _max_unpool_nd(k: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
                   output_size: Any) -> Tensor:
    op = f"max_unpool{k}d"
    ks = _tuple(kernel_size, k, op, "kernel_size")
    st = _stride(stride, ks, k, op)
    pad = _tuple(padding, k, op, "padding")
    size = _unpool_output_size(input, ks, st, pad, output_size)
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    if indices.dtype != fb.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    unbatched = input.dim() == k + 1
    out = _max_unpool(_batch(input, unbatched), _batch(indices, unbatched), size)
    return _unbatch(out, unbatched)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    r"""The partial inverse of :func:`max_pool1d`: each value written at its index, zeros elsewhere.

    ``output_size`` picks among the sizes that pool to the input's (default: the smallest).
    """
    return _max_unpool_nd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    r"""The partial inverse of :func:`max_pool2d`. See :class:`~flambeau.nn.MaxUnpool2d`."""
    return _max_unpool_nd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    r"""The partial inverse of :func:`max_pool3d`. See :class:`~flambeau.nn.MaxUnpool3d`."""
    return _max_unpool_nd(3, input, indices, kernel_size, stride, padding, output_size)


# -- average pooling ----------------------------------------------------------------------------------

def _avg_pool_nd(k: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                 count_include_pad: bool, divisor_override: int | None) -> Tensor:
    op = f"avg_pool{k}d"
    ks = _tuple(kernel_size, k, op, "kernel_size")
    st = _stride(stride, ks, k, op)
    pad = _tuple(padding, k, op, "padding")
    unbatched = _check_rank(input, k, op)
    out = _avg_pool(_batch(input, unbatched), ks, st, pad, bool(ceil_mode), bool(count_include_pad),
                    divisor_override)
    return _unbatch(out, unbatched)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    r"""1-d average pooling over an input ``(N, C, L)`` or ``(C, L)``.

    Args:
        kernel_size, stride, padding, ceil_mode: as :func:`max_pool1d` (zero padding).
        count_include_pad: divide by the window's size including the padding it covers.
    """
    return _avg_pool_nd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    r"""2-d average pooling over an input ``(N, C, H, W)`` or ``(C, H, W)``.

    ``divisor_override``, when given, divides every window's sum instead of its size.
    See :class:`~flambeau.nn.AvgPool2d`.
    """
    return _avg_pool_nd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    r"""3-d average pooling over an input ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    See :class:`~flambeau.nn.AvgPool3d`.
    """
    return _avg_pool_nd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# -- LP pooling ---------------------------------------------------------------------------------------

def _lp_pool_nd(k: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,
                ceil_mode: bool) -> Tensor:
    ks = _tuple(kernel_size, k, f"lp_pool{k}d", "kernel_size")
    out = _avg_pool_nd(k, input.pow(norm_type), ks, stride, 0, ceil_mode, True, None)
    # sign * relu(|x|) keeps the sign of a (rounding-)negative mean of an odd power, as PyTorch does.
    return (fb.sign(out) * relu(fb.abs(out))).mul(math.prod(ks)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    r"""1-d power-average pooling: ``(sum over the window of x^p)^(1/p)``.

    ``p = inf`` is max pooling and ``p = 1`` sum pooling; there is no padding.
    """
    return _lp_pool_nd(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    r"""2-d power-average pooling. See :func:`lp_pool1d` and :class:`~flambeau.nn.LPPool2d`."""
    return _lp_pool_nd(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    r"""3-d power-average pooling. See :func:`lp_pool1d` and :class:`~flambeau.nn.LPPool3d`."""
    return _lp_pool_nd(3, input, norm_type, kernel_size, stride, ceil_mode)


# -- adaptive pooling ---------------------------------------------------------------------------------

def _adaptive_size(input: Tensor, output_size: Any, k: int, op: str) -> tuple[int, ...]:
    """``output_size`` as ``k`` ints, ``None`` entries taking the input's size."""
    if isinstance(output_size, int) or output_size is None:
        sizes: Sequence[Any] = (output_size,) * k
    else:
        sizes = tuple(output_size)
        if len(sizes) != k:
            if k == 1:
                raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(sizes)})")
            raise RuntimeError(f"{op}(): internal error: output_size.size() must be {k}")
    spatial = input.shape[input.dim() - k:]
    return tuple(spatial[d] if s is None else int(s) for d, s in enumerate(sizes))


def _adaptive_rank(input: Tensor, k: int, op: str) -> bool:
    """True when ``input`` is unbatched; PyTorch's errors for a wrong rank or an empty spatial dim."""
    dim = input.dim()
    if dim not in (k + 1, k + 2):
        if k == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor for argument #1 'self' "
                               f"(while checking arguments for {op})")
        colon = ":" if op.startswith("adaptive_max") else ""
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got{colon} {list(input.shape)}")
    for d in range(dim - k, dim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {d} being empty")
    return dim == k + 1


def _adaptive_avg_nd(k: int, input: Tensor, output_size: Any) -> Tensor:
    op = f"adaptive_avg_pool{k}d"
    if k == 1:
        _adaptive_rank(input, k, op)  # 1-d checks the rank before pooling to size 1 (as 2-d)
    if not input.dtype.is_floating_point and _all_ones(input, output_size, k):
        # PyTorch pools to size 1 with mean() (before its 2-d and 3-d rank checks): integers and bool
        # get mean's error, complex its mean.
        return input.mean(tuple(range(-k, 0)), keepdim=True)
    unbatched = _adaptive_rank(input, k, op)
    size = _adaptive_size(input, output_size, k, op)
    return _unbatch(_adaptive_avg_pool(_batch(input, unbatched), size), unbatched)


def _all_ones(input: Tensor, output_size: Any, k: int) -> bool:
    """Whether ``output_size`` (``None`` entries taking the input's trailing sizes) is all ones."""
    sizes = (output_size,) * k if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(sizes) != k or input.dim() < k:
        return False
    trailing = input.shape[input.dim() - k:]
    return all(int(trailing[d] if s is None else s) == 1 for d, s in enumerate(sizes))


def _adaptive_max_nd(k: int, input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    op = f"adaptive_max_pool{k}d"
    unbatched = _adaptive_rank(input, k, op)
    size = _adaptive_size(input, output_size, k, op)
    values, indices = _adaptive_max_pool(_batch(input, unbatched), size)
    return _unbatch(values, unbatched), _unbatch(indices, unbatched)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    r"""1-d adaptive average pooling to ``output_size``: output ``i`` of ``L_out`` averages the input over
    ``[floor(i * L / L_out), ceil((i + 1) * L / L_out))``."""
    return _adaptive_avg_nd(1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    r"""2-d adaptive average pooling. ``None`` in ``output_size`` keeps that input size."""
    return _adaptive_avg_nd(2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    r"""3-d adaptive average pooling. ``None`` in ``output_size`` keeps that input size."""
    return _adaptive_avg_nd(3, input, output_size)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""1-d adaptive max pooling, returning ``(output, indices)``."""
    return _adaptive_max_nd(1, input, output_size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""2-d adaptive max pooling, returning ``(output, indices)``."""
    return _adaptive_max_nd(2, input, output_size)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""3-d adaptive max pooling, returning ``(output, indices)``."""
    return _adaptive_max_nd(3, input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""1-d adaptive max pooling over the windows of :func:`adaptive_avg_pool1d`."""
    out = _adaptive_max_nd(1, input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""2-d adaptive max pooling. ``None`` in ``output_size`` keeps that input size."""
    out = _adaptive_max_nd(2, input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    r"""3-d adaptive max pooling. ``None`` in ``output_size`` keeps that input size."""
    out = _adaptive_max_nd(3, input, output_size)
    return out if return_indices else out[0]


# -- fractional max pooling ---------------------------------------------------------------------------

def _fractional_starts(samples: Tensor, in_size: int, out_size: int, kernel: int) -> Tensor:
    """The window starts of each plane along one dim, from its samples ``u`` in [0, 1) (shape (P,)):
    ``floor((i + u) * alpha) - floor(u * alpha)`` with ``alpha = (in - k) / (out - 1)``, and the last
    window ending at the input's end (PyTorch's ``generate_intervals``, in the samples' dtype)."""
    p = samples.shape[0]
    last = fb.full((p, 1), in_size - kernel, dtype=fb.int64, device=samples.device)
    if out_size == 1:
        return last
    alpha = (in_size - kernel) / (out_size - 1)
    i = fb.arange(out_size - 1, device=samples.device).to(samples.dtype)
    u = samples.reshape(p, 1)
    starts = ((i + u) * alpha).to(fb.int64) - (u * alpha).to(fb.int64)
    return fb.cat([starts, last], 1)


def _fractional_nd(k: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                   samples: Tensor | None) -> tuple[Tensor, Tensor]:
    op = f"fractional_max_pool{k}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    ks = _tuple(kernel_size, k, op, "kernel_size")
    if samples is None and not (input.dtype.is_floating_point or input.dtype.is_complex):
        # PyTorch draws the samples with rand() in the input's dtype first
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{_type_name(input.dtype)}\'')
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}")
    unbatched = input.dim() == k + 1
    x = _batch(input, unbatched)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    if output_size is None:
        ratio = (output_ratio,) * k if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        if len(ratio) == 1:
            ratio = ratio * k
        out = tuple(int(spatial[d] * float(ratio[d])) for d in range(k))
    else:
        out = _tuple(output_size, k, op, "output_size")
    names = ("time", "height", "width")[3 - k:]
    for d in range(k):
        if out[d] + ks[d] - 1 > spatial[d]:
            raise RuntimeError(f"{op}(): pool {names[d]} {ks[d]} too large relative to input {names[d]} "
                               f"{spatial[d]}")
    if samples is None:
        samples = fb.rand((n, c, k), dtype=x.dtype, device=x.device)
    elif samples.dim() != 3 or samples.shape[2] != k:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {k}; got "
                           f"{samples.shape[2] if samples.dim() == 3 else samples.dim()}.")
    elif tuple(samples.shape[:2]) != (n, c):
        raise RuntimeError(f"Expect _random_samples to be of shape {[n, c, k]}, got {list(samples.shape)}")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{op}_out_frame" not implemented for \'{_type_name(x.dtype)}\'')
    planes = n * c
    flat_samples = samples.reshape(planes, k)
    # PyTorch's sample order: width first for 2-d, (time, height, width) for 3-d.
    order = (1, 0) if k == 2 else tuple(range(k))
    plane_size = math.prod(spatial)
    index = fb.zeros((planes,) + (1,) * (2 * k), dtype=fb.int64, device=x.device)
    for d in range(k):
        starts = _fractional_starts(flat_samples[:, order[d]], spatial[d], out[d], ks[d])
        pos = starts.reshape(planes, out[d], 1) + fb.arange(ks[d], device=x.device).reshape(1, 1, ks[d])
        shape = [planes] + [1] * (2 * k)
        shape[1 + d], shape[1 + k + d] = out[d], ks[d]
        index = index * spatial[d] + pos.reshape(shape)
    index = index.expand((planes,) + out + ks).reshape(planes, math.prod(out), math.prod(ks))
    windows = x.reshape(planes, plane_size).gather(1, index.reshape(planes, -1)).reshape(index.shape)
    best = windows.argmax(-1, keepdim=True)
    indices = index.gather(2, best).reshape((n, c) + out)
    values = windows.gather(2, best).reshape((n, c) + out)
    return _unbatch(values, unbatched), _unbatch(indices, unbatched)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""2-d fractional max pooling, returning ``(output, indices)``. See :func:`fractional_max_pool2d`."""
    return _fractional_nd(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""3-d fractional max pooling, returning ``(output, indices)``. See :func:`fractional_max_pool3d`."""
    return _fractional_nd(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    r"""2-d fractional max pooling (Graham, 2014): windows of ``kernel_size`` at pseudo-random steps
    chosen per plane from ``_random_samples`` (uniform in [0, 1), drawn when not given), so that the
    output has ``output_size`` (or ``input size * output_ratio``) elements per dim."""
    out = _fractional_nd(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    r"""3-d fractional max pooling. See :func:`fractional_max_pool2d`."""
    out = _fractional_nd(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]

"""Declarations of flambeau-nn's convolution ops.

``nn_convolution`` is PyTorch's ``aten::convolution``: an N-d (1 to 3 spatial dims) convolution or,
with ``transposed=True``, a transposed convolution, batched input only (the functional forms add
and drop the batch dim, and resolve ``padding='same'``/``'valid'`` to integers).
``nn_convolution_backward`` gives the gradients of its input, weight and bias at once; those that
``output_mask`` leaves out come back empty (shape ``(0,)``).

Both have a composite (``_conv_math``) on flambeau ops: im2col as an ``index_select`` over the
flattened input, one extra zero slot standing for the padding, then a batched ``matmul``; col2im
is the matching ``index_add``. Every backend runs them; the CPU backend has kernels of its own.
"""
from __future__ import annotations

from typing import Any, Sequence

from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape, type_name

from . import _conv_math as C


def expand_param(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``value`` (an int or a sequence of 1 or ``n`` ints) as ``n`` ints, as PyTorch's expand_param_if_needed."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int or a tuple of ints, not bool")
    if isinstance(value, int):
        return (value,) * n
    try:
        vals = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{name} must be an int or a tuple of ints, not {type(value).__name__}") from None
    if len(vals) == 1:
        return vals * n
    if len(vals) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(vals)}")
    return vals


def _xs(values: Sequence[int]) -> str:
    return "(" + " x ".join(str(v) for v in values) + ")"


def _check_params(k: int, stride: Any, padding: Any, dilation: Any, output_padding: Any, groups: Any,
                  transposed: bool) -> tuple:
    s = expand_param(stride, k, "stride")
    p = expand_param(padding, k, "padding")
    d = expand_param(dilation, k, "dilation")
    op = expand_param(output_padding, k, "output_padding")
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise TypeError(f"groups must be an int, not {type(groups).__name__}")
    if any(v <= 0 for v in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(d)}")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if transposed and any(op[i] >= s[i] and op[i] >= d[i] for i in range(k)):
        # PyTorch runs 1-d as 2-d (height 1): its message names that dim too
        names = ("depth", "height", "width")[-max(k, 2):]
        lead = max(0, 2 - k)

        def named(label: str, vals: tuple, fill: int) -> str:
            return " ".join(f"{label}_{n}: {v}" for n, v in zip(names, (fill,) * lead + vals))

        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           f"{named('output_padding', op, 0)} {named('stride', s, 1)} {named('dilation', d, 1)}")
    if not transposed and any(op):
        raise RuntimeError("output_padding is only supported for transposed convolutions")
    return s, p, d, op


def conv_geometry(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
                  transposed: bool, output_padding: Any, groups: Any) -> C.Geometry:
    """Checks a convolution's arguments with PyTorch's errors; returns its geometry."""
    if weight.ndim not in (3, 4, 5):
        raise RuntimeError(f"convolution: expected a 3-, 4- or 5-dimensional weight, but got weight of size "
                           f"{fmt_shape(weight.shape)}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{fmt_shape(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{fmt_shape(input.shape)} instead")
    k = weight.ndim - 2
    s, p, d, op = _check_params(k, stride, padding, dilation, output_padding, groups, bool(transposed))
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(weight.dtype)}")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({type_name(input.dtype).lower()}) and bias type "
                           f"({type_name(bias.dtype).lower()}) should be the same")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"slow_conv2d_cpu" not implemented for \'{type_name(input.dtype)}\'')
    for t in (weight, bias):
        if t is not None and t.device != input.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{input.device} and {t.device}!")
    kernel = tuple(weight.shape[2:])
    channels = input.shape[1]
    if transposed:
        if weight.shape[0] != channels:
            raise RuntimeError(f"Given transposed=1, weight of size {fmt_shape(weight.shape)}, expected "
                               f"input{fmt_shape(input.shape)} to have {weight.shape[0]} channels, but got "
                               f"{channels} channels instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size {fmt_shape(weight.shape)} instead")
        out_channels = weight.shape[1] * groups
    else:
        if weight.shape[0] % groups:
            # (PyTorch prints the size in double brackets here)
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{fmt_shape(weight.shape)}] instead")
        if weight.shape[1] * groups != channels:
            raise RuntimeError(f"Given groups={groups}, weight of size {fmt_shape(weight.shape)}, expected "
                               f"input{fmt_shape(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                               f"{channels} channels instead")
        out_channels = weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {fmt_shape(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {fmt_shape(bias.shape)} instead")
    in_size = tuple(input.shape[2:])
    if transposed:
        out_size = tuple((in_size[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op[i] + 1 for i in range(k))
    else:
        padded = tuple(in_size[i] + 2 * p[i] for i in range(k))
        effective = tuple(d[i] * (kernel[i] - 1) + 1 for i in range(k))
        if any(padded[i] < effective[i] for i in range(k)):
            raise RuntimeError(f"Calculated padded input size per channel: {_xs(padded)}. Kernel size: "
                               f"{_xs(effective)}. Kernel size can't be greater than actual input size")
        out_size = tuple((padded[i] - effective[i]) // s[i] + 1 for i in range(k))
    if any(o <= 0 for o in out_size) and not (transposed and any(o == 0 for o in in_size)):
        raise RuntimeError(f"Given input size per channel: {_xs(in_size)}. Calculated output size per channel: "
                           f"{_xs(out_size)}. Output size is too small")
    return C.Geometry(input.shape[0], channels, out_channels, groups, in_size, out_size, kernel, s, p, d,
                      bool(transposed))


def _convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    g = conv_geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return (g.batch, g.out_channels) + g.out_size, input.dtype


def _convolution_backward_meta(grad_out, input, weight, stride, padding, dilation, transposed, output_padding,
                               groups, output_mask):
    g = conv_geometry(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    want = (g.batch, g.out_channels) + g.out_size
    if tuple(grad_out.shape) != want:
        raise RuntimeError(f"convolution_backward: expected grad_output of size {fmt_shape(want)}, but got "
                           f"{fmt_shape(grad_out.shape)}")
    if grad_out.dtype != input.dtype:
        raise RuntimeError(f"convolution_backward: expected grad_output of dtype {type_name(input.dtype)}, but got "
                           f"{type_name(grad_out.dtype)}")
    mask = tuple(bool(m) for m in output_mask)
    if len(mask) != 3:
        raise RuntimeError(f"convolution_backward: output_mask must have 3 entries, got {len(mask)}")
    shapes = (tuple(input.shape), tuple(weight.shape), (g.out_channels,))
    return [(shape if m else (0,), input.dtype) for shape, m in zip(shapes, mask)]


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    return [
        OpDecl("nn_convolution", "(input: Tensor, weight: Tensor, bias: Tensor?, stride, padding, dilation, "
               "transposed, output_padding, groups)", _convolution_meta, composite=C.convolution,
               doc="N-d convolution (or transposed convolution) of a batched input, as aten::convolution.",
               **common),
        OpDecl("nn_convolution_backward", "(grad_out: Tensor, input: Tensor, weight: Tensor, stride, padding, "
               "dilation, transposed, output_padding, groups, output_mask)", _convolution_backward_meta,
               composite=C.convolution_backward, output_names=("grad_input", "grad_weight", "grad_bias"),
               differentiable=False,
               doc="The gradients of ``nn_convolution``'s input, weight and bias (those masked off: empty).",
               **common),
    ]

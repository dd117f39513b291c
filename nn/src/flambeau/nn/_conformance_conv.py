"""Conformance cases of flambeau-nn's convolution ops (``nn_convolution``, ``nn_convolution_backward``).

The numpy references take the windows of the padded big side as strided slices (``_patches``) and
contract them with the weight, group by group; a transposed convolution is the adjoint of that.
"""
from __future__ import annotations

import itertools

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOOSE = {"float16": (3e-2, 3e-2), "bfloat16": (2e-1, 2e-1), "float32": (1e-4, 1e-4)}


def _ints(v, k):
    return (int(v),) * k if isinstance(v, int) else tuple(int(x) for x in v) * (k if len(v) == 1 else 1)


def _patches(x, kernel, s, p, d, small):
    """``(N, C, prod(kernel), prod(small))``: for each kernel offset and window, the element it reads."""
    k = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    out = []
    for kidx in itertools.product(*(range(v) for v in kernel)):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + s[i] * (small[i] - 1) + 1, s[i]) for i in range(k))
        out.append(xp[(slice(None), slice(None)) + sl].reshape(x.shape[0], x.shape[1], -1))
    return np.stack(out, axis=2)


def _sizes(x, w, s, p, d, transposed, op):
    k = w.ndim - 2
    kernel = w.shape[2:]
    if transposed:
        big = tuple((x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op[i] + 1 for i in range(k))
        return big, tuple(x.shape[2:])
    small = tuple((x.shape[2 + i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(k))
    return tuple(x.shape[2:]), small


def _grouped(a, groups):
    """``(N, C, ...)`` -> ``(N, G, C / G, ...)``."""
    return a.reshape((a.shape[0], groups, a.shape[1] // groups) + a.shape[2:])


def _conv_ref(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    k = w.ndim - 2
    s, p, d, op = (_ints(v, k) for v in (stride, padding, dilation, output_padding))
    big, small = _sizes(x, w, s, p, d, transposed, op)
    n = x.shape[0]
    if not transposed:
        cols = _grouped(_patches(x, w.shape[2:], s, p, d, small), groups)  # (N, G, Cg, K, L)
        wg = w.reshape((groups, w.shape[0] // groups) + w.shape[1:2] + (-1,))  # (G, Og, Cg, K)
        out = np.einsum("ngckl,gock->ngol", cols, wg).reshape((n, w.shape[0]) + small)
    else:
        out = _conv_transpose_ref(x, w, s, p, d, groups, big)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    return out


def _conv_transpose_ref(x, w, s, p, d, groups, big):
    """Scatter each input element times the kernel onto a canvas, then crop the padding."""
    k = w.ndim - 2
    n, c = x.shape[:2]
    og = w.shape[1]
    cg = c // groups
    full = tuple(big[i] + 2 * p[i] for i in range(k))
    canvas = np.zeros((n, og * groups) + full)
    insz = x.shape[2:]
    for kidx in itertools.product(*(range(v) for v in w.shape[2:])):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + s[i] * (insz[i] - 1) + 1, s[i]) for i in range(k))
        for g in range(groups):
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kidx]
            canvas[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg], wk)
    return canvas[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + big[i]) for i in range(k))]


def _conv_backward_ref(g, x, w, stride, padding, dilation, transposed, output_padding, groups, output_mask):
    k = w.ndim - 2
    s, p, d, op = (_ints(v, k) for v in (stride, padding, dilation, output_padding))
    big, small = _sizes(x, w, s, p, d, transposed, op)
    n = x.shape[0]
    if not transposed:
        gi = _conv_transpose_ref(g, w, s, p, d, groups, big)
        cols = _grouped(_patches(x, w.shape[2:], s, p, d, small), groups)  # (N, G, Cg, K, L)
        gw = np.einsum("ngol,ngckl->gock", _grouped(g.reshape(n, g.shape[1], -1), groups), cols).reshape(w.shape)
    else:
        gi = _conv_ref(g, w, None, s, p, d, False, 0, groups)
        cols = _grouped(_patches(g, w.shape[2:], s, p, d, small), groups)  # (N, G, Og, K, L)
        gw = np.einsum("ngcl,ngokl->gcok", _grouped(x.reshape(n, x.shape[1], -1), groups), cols).reshape(w.shape)
    gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    return tuple(v if m else np.zeros((0,)) for v, m in zip((gi, gw, gb), output_mask))


def _conv_samples(dtype: str) -> list[Sample]:
    a = lambda shape, layout="contiguous": Arg(shape, dtype, layout, low=-1, high=1)  # noqa: E731
    return [
        Sample((a((2, 3, 7)), a((4, 3, 3)), a((4,)), 1, 1, 1, False, 0, 1), note="1-d"),
        Sample((a((2, 4, 6, 5), "transposed"), a((6, 2, 3, 2)), None, (2, 1), (1, 0), (1, 2), False, 0, 2),
               note="2-d, groups, strided input"),
        Sample((a((1, 3, 6, 6)), a((3, 1, 3, 3)), a((3,)), 2, 2, 2, False, 0, 3), note="depthwise"),
        Sample((a((1, 2, 4, 3, 4)), a((3, 2, 2, 2, 3)), None, 1, (1, 0, 1), 1, False, 0, 1), note="3-d"),
        Sample((a((2, 4, 3, 4)), a((4, 3, 3, 2)), a((6,)), 2, (1, 0), 1, True, 1, 2), note="transposed 2-d"),
        Sample((a((1, 2, 5)), a((2, 3, 4)), None, 3, 1, 2, True, 1, 1), note="transposed 1-d"),
    ]


def _conv_backward_samples(dtype: str) -> list[Sample]:
    a = lambda shape: Arg(shape, dtype, low=-1, high=1)  # noqa: E731
    return [
        Sample((a((2, 4, 3, 3)), a((2, 4, 6, 5)), a((4, 2, 3, 2)), 2, 1, (1, 2), False, 0, 2, [True, True, True])),
        Sample((a((1, 3, 5)), a((1, 2, 7)), a((3, 2, 3)), 1, 0, 1, False, 0, 1, [True, False, True])),
        Sample((a((2, 6, 6, 9)), a((2, 4, 3, 4)), a((4, 3, 3, 2)), 2, (1, 0), 1, True, 1, 2, [True, True, False])),
        Sample((a((1, 2, 6, 2, 2)), a((1, 2, 5, 3, 3)), a((2, 2, 2, 2, 2)), 1, (1, 0, 0), 1, False, 0, 1,
                [False, True, True])),
    ]


def _conv_errors() -> list[ErrorCase]:
    x = Arg((1, 3, 8, 8), "float32")
    return [
        ErrorCase((x, Arg((4, 4, 3, 3), "float32"), None, 1, 0, 1, False, 0, 1), RuntimeError,
                  "Given groups=1, weight of size [4, 4, 3, 3], expected input[1, 3, 8, 8] to have 4 channels, but "
                  "got 3 channels instead"),
        ErrorCase((x, Arg((4, 3, 10, 10), "float32"), None, 1, 0, 1, False, 0, 1), RuntimeError,
                  "Kernel size can't be greater than actual input size"),
        ErrorCase((x, Arg((4, 3, 3, 3), "float32"), Arg((5,), "float32"), 1, 0, 1, False, 0, 1), RuntimeError,
                  "expected bias to be 1-dimensional with 4 elements"),
        ErrorCase((Arg((1, 3, 8), "float32"), Arg((4, 3, 3, 3), "float32"), None, 1, 0, 1, False, 0, 1),
                  RuntimeError, "Expected 4-dimensional input for 4-dimensional weight"),
        ErrorCase((x, Arg((3, 4, 3, 3), "float32"), None, 1, 0, 1, True, 1, 1), RuntimeError,
                  "output padding must be smaller than either stride or dilation"),
        ErrorCase((Arg((1, 3, 8, 8), "int64"), Arg((4, 3, 3, 3), "int64"), None, 1, 0, 1, False, 0, 1),
                  RuntimeError, "not implemented for 'Long'"),
    ]


def cases() -> list[OpCase]:
    return [
        OpCase("nn_convolution", _FLOATS, _conv_samples, _conv_ref, lambda s: s.args[0].dtype, errors=_conv_errors,
               tolerances=_LOOSE),
        OpCase("nn_convolution_backward", _FLOATS, _conv_backward_samples, _conv_backward_ref,
               lambda s: (s.args[0].dtype,) * 3, tolerances=_LOOSE),
    ]

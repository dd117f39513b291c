"""Cases for view ops: results share their input's storage; shapes and strides must match numpy's views."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same


def _each(*specs):
    """Samples from ``(shape, layout, *args)`` specs, for any dtype."""

    def samples(dtype: str) -> list[Sample]:
        return [Sample((Arg(shape, dtype, layout), *rest)) for shape, layout, *rest in specs]

    return samples


def _view_ref(x, size):
    return x.view().reshape(size) if x.size else np.empty(_infer(size, x.size), x.dtype)


def _infer(size, numel):
    size = list(size)
    if -1 in size:
        known = math.prod(s for s in size if s != -1)
        size[size.index(-1)] = numel // known if known else 0
    return tuple(size)


def _reshape_ref(x, shape):
    return np.reshape(x, shape)


def _expand_ref(x, size):
    offset = len(size) - x.ndim
    shape = tuple(x.shape[i - offset] if s == -1 else s for i, s in enumerate(size))
    return np.broadcast_to(x, shape)


def _squeeze_ref(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if x.ndim == 0:
        return x
    return np.squeeze(x, axis=tuple(d % x.ndim for d in dims if x.shape[d] == 1))


def _narrow_ref(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    return (
        np.take(x, range(start, start + length), axis=dim)
        if False
        else x[(slice(None),) * (dim % x.ndim) + (slice(start, start + length),)]
    )


def _select_ref(x, dim, index):
    return x[(slice(None),) * (dim % x.ndim) + (index, Ellipsis)]


def _unfold_ref(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)[:size]
    d = dimension % x.ndim
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)]


def _as_strided_ref(x, size, stride, storage_offset=None):
    # The kit builds strided inputs over a fresh contiguous storage, so the storage is x's root.
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    flat = root.reshape(-1)
    offset = storage_offset or 0
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=tuple(size), strides=tuple(s * x.itemsize for s in stride)
    )


def _basic_index_ref(x, index):
    return x[tuple(index) + (Ellipsis,)]


def _unbind_ref(x, dim=0):
    return tuple(x[(slice(None),) * (dim % x.ndim) + (i,)] for i in range(x.shape[dim]))


def _flatten_ref(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (math.prod(x.shape[s : e + 1]),) + x.shape[e + 1 :])


def _err(shape, *rest, exc=RuntimeError, match=""):
    return ErrorCase((Arg(shape, "float32"), *rest), exc, match)


def _errors(*items):
    return lambda: list(items)


def _view(op, specs, ref, errors=(), strides=True):
    return OpCase(op, P.ALL, _each(*specs), ref, same, errors=_errors(*errors), upcast=False, check_strides=strides)


def cases() -> list[OpCase]:
    c = [
        _view(
            "view",
            [
                ((3, 4), "contiguous", (4, 3)),
                ((3, 4), "contiguous", (-1,)),
                ((2, 3, 4), "contiguous", (6, -1)),
                ((), "contiguous", (1, 1)),
                ((0, 3), "contiguous", (3, 0)),
                ((3, 4), "sliced", (3, 2, 2)),
                ((3, 4), "transposed", (3, 4, 1)),
            ],
            _view_ref,
            [
                _err((3, 4), (5, 3), match="shape '[5, 3]' is invalid for input of size 12"),
                _err((3, 4), (-1, -1), match="only one dimension can be inferred"),
            ],
            strides=False,
        ),
        _view(
            "reshape",
            [
                ((3, 4), "contiguous", (4, 3)),
                ((3, 4), "transposed", (12,)),
                ((2, 3, 4), "sliced", (-1, 2)),
                ((), "contiguous", (1,)),
                ((0, 3), "contiguous", (3, 0)),
            ],
            _reshape_ref,
            [_err((3, 4), (5, 3), match="shape '[5, 3]' is invalid for input of size 12")],
            strides=False,
        ),
        _view(
            "transpose",
            [
                ((3, 4), "contiguous", 0, 1),
                ((2, 3, 4), "sliced", -1, 0),
                ((), "contiguous", 0, -1),
                ((0, 3), "transposed", 1, 0),
            ],
            lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
            [
                _err(
                    (2, 3),
                    0,
                    2,
                    exc=IndexError,
                    match="Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                )
            ],
        ),
        _view(
            "permute",
            [
                ((2, 3, 4), "contiguous", (2, 0, 1)),
                ((2, 3, 4), "sliced", (-1, -3, -2)),
                ((3, 4), "transposed", (1, 0)),
                ((), "contiguous", ()),
            ],
            lambda x, dims: np.transpose(x, dims),
            [
                _err((2, 3), (0,), match="number of dimensions in the tensor input does not match"),
                _err((2, 3), (0, 0), match="permute(): duplicate dims are not allowed."),
            ],
        ),
        _view(
            "t",
            [((3, 4), "contiguous"), ((3, 4), "transposed"), ((5,), "sliced"), ((), "contiguous")],
            lambda x: x.T,
            [_err((2, 3, 4), match="t() expects a tensor with <= 2 dimensions, but self is 3D")],
        ),
        _view(
            "expand",
            [
                ((3, 1), "contiguous", (3, 4)),
                ((4,), "sliced", (2, 3, 4)),
                ((1, 4), "transposed", (-1, 4)),
                ((), "contiguous", (2, 2)),
                ((0, 1), "contiguous", (0, 5)),
            ],
            _expand_ref,
            [_err((3,), (2, 4), match="The expanded size of the tensor (4) must match the existing size (3)"),
             _err((1, 1), (2 ** 62, 2), match="numel: integer multiplication overflow")],
        ),
        _view(
            "squeeze",
            [
                ((3, 1, 4), "contiguous"),
                ((1, 3, 1), "sliced", 0),
                ((3, 1), "transposed", (1,)),
                ((3, 4), "contiguous", 1),
                ((), "contiguous"),
                ((1, 0), "contiguous"),
            ],
            _squeeze_ref,
            [_err((2, 1), 3, exc=IndexError, match="Dimension out of range")],
            strides=False,
        ),
        _view(
            "unsqueeze",
            [((3, 4), "contiguous", 0), ((3, 4), "transposed", -1), ((5,), "sliced", 1), ((), "contiguous", 0)],
            lambda x, dim: np.expand_dims(x, dim % (x.ndim + 1)),
            [_err((2,), 3, exc=IndexError, match="Dimension out of range")],
            strides=False,
        ),
        _view(
            "narrow",
            [((5, 4), "contiguous", 0, 1, 3), ((3, 6), "sliced", -1, -3, 2), ((3, 4), "transposed", 1, 0, 0)],
            _narrow_ref,
            [
                _err((3,), 0, 2, 3, match="start (2) + length (3) exceeds dimension size (3)."),
                _err((), 0, 0, 1, match="narrow() cannot be applied to a 0-dim tensor."),
            ],
        ),
        _view(
            "select",
            [
                ((5, 4), "contiguous", 0, 2),
                ((3, 6), "sliced", -1, -1),
                ((3, 4), "transposed", 1, 0),
                ((4,), "contiguous", 0, 3),
            ],
            _select_ref,
            [
                ErrorCase(
                    (Arg((2, 3), "float32"), 1, 3),
                    IndexError,
                    "select(): index 3 out of range for tensor of size [2, 3] at dimension 1",
                )
            ],
        ),
        _view(
            "unfold",
            [
                ((7,), "contiguous", 0, 3, 2),
                ((3, 6), "sliced", 1, 2, 1),
                ((4, 3), "transposed", 0, 4, 4),
                ((5, 2), "contiguous", -2, 1, 3),
            ],
            _unfold_ref,
            [
                _err((3,), 0, 4, 1, match="maximum size for tensor at dimension 0 is 3 but size is 4"),
                _err((3,), 0, 2, 0, match="step is 0 but must be > 0"),
            ],
        ),
        _view(
            "as_strided",
            [
                ((3, 4), "contiguous", (2, 2), (4, 1)),
                ((3, 4), "contiguous", (3, 3), (1, 4), 0),
                ((12,), "contiguous", (4,), (2,), 3),
                ((3, 4), "transposed", (2, 3), (0, 1), 1),
            ],
            _as_strided_ref,
            [
                _err((4,), (3,), (2,), match="out of bounds for storage of size 16"),
                _err((4,), (2,), (1, 1), match="mismatch in length of strides and shape"),
                _err((4,), (2 ** 62, 2), (0, 0), match="numel: integer multiplication overflow"),
            ],
        ),
        _view(
            "basic_index",
            [
                ((4, 5), "contiguous", (slice(1, None, 2), 3)),
                ((4, 5), "transposed", (None, 0, slice(None))),
                ((6,), "sliced", (slice(None, None, 3),)),
                ((2, 3, 4), "contiguous", (1, 2, 3)),
                ((0, 3), "contiguous", (slice(None), slice(1, 2))),
            ],
            _basic_index_ref,
        ),
        OpCase(
            "unbind",
            P.ALL,
            _each(((3, 4), "contiguous"), ((3, 4), "transposed", 1), ((2, 3), "sliced", -1), ((0, 2), "contiguous", 1)),
            _unbind_ref,
            lambda s: same(s),
            upcast=False,
            check_strides=True,
            errors=_errors(_err((2,), 1, exc=IndexError, match="Dimension out of range")),
        ),
        OpCase(
            "contiguous",
            P.ALL,
            _each(
                ((3, 4), "contiguous"),
                ((3, 4), "transposed"),
                ((5,), "sliced"),
                ((), "contiguous"),
                ((0, 2), "transposed"),
            ),
            lambda x: np.array(x, order="C"),
            same,
            upcast=False,
            check_strides=True,  # the result is row-major, whatever the input's layout
        ),
        OpCase(
            "flatten",
            P.ALL,
            _each(
                ((2, 3, 4), "contiguous"),
                ((3, 4), "transposed"),
                ((2, 3, 4), "sliced", 1),
                ((2, 3, 4), "contiguous", 0, 1),
                ((), "contiguous"),
                ((0, 3), "contiguous"),
            ),
            _flatten_ref,
            same,
            upcast=False,
            errors=_errors(
                _err((2, 3, 4), 2, 1, match="flatten() has invalid args: start_dim cannot come after end_dim")
            ),
        ),
    ]
    return c

"""Cases for hsplit/vsplit/dsplit, narrow_copy, adjoint, and select/slice/diagonal_scatter."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same


def _case(op, samples, ref, errors=(), **kw):
    return OpCase(op, P.ALL, samples, ref, same, errors=lambda: list(errors), upcast=False, **kw)


def _a(shape, dtype, layout="contiguous"):
    return Arg(shape, dtype, layout)


def _f32(shape):
    return Arg(shape, "float32")


def _select_scatter_ref(x, src, dim, index):
    out = x.copy()
    out[(slice(None),) * (dim % x.ndim) + (index,)] = src
    return out


def _slice_scatter_ref(x, src, dim=0, start=None, end=None, step=1):
    out = x.copy()
    out[(slice(None),) * (dim % x.ndim) + (slice(start, end, step),)] = src
    return out


def _diagonal_scatter_ref(x, src, offset=0, dim1=0, dim2=1):
    out = x.copy()
    view = np.diagonal(out, offset, dim1, dim2)
    index = np.nonzero(np.ones(view.shape[-1]))[0]
    a, b = (index, index + offset) if offset >= 0 else (index - offset, index)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))  # a view of out
    moved[..., a, b] = src
    return out


def cases() -> list[OpCase]:
    return [
        _case("hsplit", lambda d: [Sample((_a((3, 4), d), 2)), Sample((_a((4, 3), d, "transposed"), [1, 3])),
                                   Sample((_a((6,), d, "sliced"), 3))],
              lambda x, s: tuple(np.hsplit(x, s)), check_strides=True, errors=[
                  ErrorCase((_f32((3, 4)), 3), RuntimeError,
                            "flambeau.hsplit attempted to split along dimension 1, but "
                            "the size of the dimension 4 is not divisible by the split_size 3!"),
                  ErrorCase((_f32(()), 1), RuntimeError, "flambeau.hsplit requires a tensor with at least 1 dimension"),
              ]),
        _case("vsplit", lambda d: [Sample((_a((4, 3), d), 2)), Sample((_a((4, 3), d, "transposed"), [1, 3]))],
              lambda x, s: tuple(np.vsplit(x, s)), check_strides=True, errors=[
                  ErrorCase((_f32((4,)), 2), RuntimeError,
                            "flambeau.vsplit requires a tensor with at least 2 dimension, "
                            "but got a tensor with 1 dimensions!"),
              ]),
        _case("dsplit", lambda d: [Sample((_a((2, 3, 4), d), 2)), Sample((_a((2, 3, 4), d, "sliced"), [1]))],
              lambda x, s: tuple(np.dsplit(x, s)), check_strides=True, errors=[
                  ErrorCase((_f32((2, 4)), 2), RuntimeError,
                            "flambeau.dsplit requires a tensor with at least 3 dimension"),
              ]),
        _case("narrow_copy", lambda d: [Sample((_a((5, 4), d), 0, 1, 3)), Sample((_a((3, 6), d, "sliced"), -1, -3, 2))],
              lambda x, dim, start, length: x[(slice(None),) * (dim % x.ndim) +
                                              (slice(start % x.shape[dim], start % x.shape[dim] + length),)].copy(),
              errors=[ErrorCase((_f32((3,)), 0, 2, 3), RuntimeError,
                                "start (2) + length (3) exceeds dimension size (3).")]),
        _case("adjoint", lambda d: [Sample((_a((3, 4), d),)), Sample((_a((2, 3, 4), d, "sliced"),)),
                                    Sample((_a((3, 4), d, "transposed"),))],
              lambda x: np.conj(np.swapaxes(x, -2, -1)) if x.dtype.kind == "c" else np.swapaxes(x, -2, -1),
              errors=[ErrorCase((_f32((3,)),), RuntimeError, "only supported on matrices or batches of matrices")]),
        _case("select_scatter", lambda d: [Sample((_a((3, 4), d), _a((4,), d), 0, 1)),
                                           Sample((_a((3, 4), d, "transposed"), _a((3,), d, "sliced"), -1, -1))],
              _select_scatter_ref, errors=[
                  ErrorCase((_f32((3, 4)), _f32((3,)), 0, 0), RuntimeError,
                            "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]"),
              ]),
        _case("slice_scatter", lambda d: [Sample((_a((6, 3), d), _a((2, 3), d), 0, 1, 5, 2)),
                                          Sample((_a((3, 4), d, "transposed"), _a((3, 2), d), 1, None, 2)),
                                          Sample((_a((5,), d), _a((5,), d)))],
              _slice_scatter_ref, errors=[
                  ErrorCase((_f32((4,)), _f32((3,)), 0, 0, 2), RuntimeError, "expected src to have a size equal"),
              ]),
        _case("diagonal_scatter", lambda d: [Sample((_a((3, 4), d), _a((3,), d))),
                                             Sample((_a((3, 4), d, "transposed"), _a((2,), d), -1)),
                                             Sample((_a((2, 3, 3), d), _a((3, 2), d), 1, 0, 2))],
              _diagonal_scatter_ref),
    ]

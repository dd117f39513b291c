"""Cases for joining, splitting and reordering ops: cat, stack, split, flip, roll, repeat, movedim..."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same


def _first_dtype(sample: Sample) -> str:
    """The dtype of the first tensor, inside a list of them or not."""
    for a in sample.args:
        if isinstance(a, Arg):
            return a.dtype
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Arg):
                    return x.dtype
    raise ValueError("no tensor argument")


def _list_promoted(sample: Sample) -> str:
    dtypes = [x.dtype for x in sample.args[0]]
    out = dtypes[0]
    for d in dtypes[1:]:
        out = P.promote_types(out, d)
    return out


def _case(op, samples, ref, errors=(), dtypes=P.ALL, result=same, **kw):
    return OpCase(op, dtypes, samples, ref, result, errors=lambda: list(errors), upcast=False, **kw)


def _a(shape, dtype, layout="contiguous", **kw):
    return Arg(shape, dtype, layout, **kw)


def _f32(shape, layout="contiguous"):
    return Arg(shape, "float32", layout)


# -- references ------------------------------------------------------------------------

def _cat_ref(tensors, dim=0):
    kept = [t for t in tensors if t.shape != (0,)]
    if not kept:
        return np.empty((0,), np.result_type(*tensors))
    dtype = np.result_type(*kept) if len({t.dtype for t in kept}) > 1 else kept[0].dtype
    return np.concatenate([t.astype(dtype) for t in kept], axis=dim)


def _split_ref(x, split, dim=0):
    d = dim % x.ndim
    n = x.shape[d]
    if isinstance(split, (list, tuple)):
        bounds = [int(b) for b in np.cumsum([0, *split])]
    else:
        bounds = list(range(0, n, split)) + [n] if split and n else [0, 0]
    return tuple(x[(slice(None),) * d + (slice(a, b),)] for a, b in zip(bounds, bounds[1:]))


def _chunk_ref(x, chunks, dim=0):
    d = dim % x.ndim
    n = x.shape[d]
    step = math.ceil(n / chunks)
    if step == 0:
        return tuple(x[(slice(None),) * d + (slice(0, 0),)] for _ in range(chunks))
    return _split_ref(x, step, d)


def _tensor_split_ref(x, spec, dim=0):
    if isinstance(spec, np.ndarray):
        spec = spec.tolist()
    return tuple(np.array_split(x, spec, axis=dim))


def _movedim_ref(x, src, dst):
    return np.moveaxis(x, src, dst)


def _unflatten_ref(x, dim, sizes):
    d = dim % x.ndim
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


def _atleast_ref(n):
    def ref(x):
        return {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n](x)
    return ref


def _roll_ref(x, shifts, dims=None):
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, dims)


def _repeat_ref(x, repeats):
    return np.tile(x, repeats)


def _repeat_interleave_ref(x, repeats=None, dim=None, *, output_size=None):
    if isinstance(repeats, np.ndarray):
        repeats = repeats.reshape(-1)
        if repeats.size == 1:
            repeats = int(repeats[0])
    if dim is None:
        return np.repeat(x.reshape(-1), repeats)
    return np.repeat(x, repeats, axis=dim)


def _rot90_ref(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, dims)


def _no_dim_error(op, *rest, exc=IndexError, match="Dimension out of range"):
    return ErrorCase((_f32((2, 3)), *rest), exc, match)


def _joins() -> list[OpCase]:
    def cat_samples(dtype):
        return [
            Sample(([_a((2, 3), dtype), _a((4, 3), dtype, "transposed")],)),
            Sample(([_a((2, 3), dtype), _a((2, 1), dtype), _a((2, 4), dtype, "sliced")], 1)),
            Sample(([_a((2, 3), dtype), _a((0,), dtype)], -1), note="legacy empty 1-D"),
            Sample(([_a((5,), dtype)],)),
            Sample(([_a((0, 3), dtype), _a((1, 3), dtype)], 0)),
            Sample(([_a((2, 3), dtype), _a((2, 3), "float64" if dtype != "float64" else "int32")], 0), note="promotes"),
        ]

    def list_samples(shapes):
        def samples(dtype):
            return [Sample(([_a(s, dtype, lay) for s, lay in group],)) for group in shapes]
        return samples

    stack_errors = [
        ErrorCase(([],), RuntimeError, "stack expects a non-empty TensorList"),
        ErrorCase(([_f32((2, 3)), _f32((2, 4))],), RuntimeError,
                  "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1"),
        ErrorCase(([_f32((2, 3))], 3), IndexError,
                  "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    ]
    return [
        _case("cat", cat_samples, _cat_ref, result=_list_promoted, errors=[
            ErrorCase(([],), RuntimeError, "expected a non-empty list of Tensors"),
            ErrorCase(([_f32((2, 3)), _f32((3,))],), RuntimeError,
                      "Tensors must have same number of dimensions: got 2 and 1"),
            ErrorCase(([_f32((2, 2)), _f32((3, 2))], 1), RuntimeError,
                      "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor "
                      "number 1 in the list."),
            ErrorCase(([_f32(())],), RuntimeError, "zero-dimensional tensor (at position 0) cannot be concatenated"),
            ErrorCase(([_f32((2,))], 1), IndexError, "Dimension out of range"),
        ]),
        _case("stack", lambda d: [
            Sample(([_a((2, 3), d), _a((2, 3), d, "transposed")],)),
            Sample(([_a((2, 3), d), _a((2, 3), d, "sliced")], -1)),
            Sample(([_a((), d), _a((), d), _a((), d)],)),
            Sample(([_a((0, 2), d)], 1)),
        ], lambda ts, dim=0: np.stack(ts, axis=dim), result=_first_dtype, errors=stack_errors),
        _case("hstack", list_samples([[((2, 3), "contiguous"), ((2, 2), "transposed")],
                                      [((3,), "contiguous"), ((2,), "sliced")],
                                      [((), "contiguous"), ((2,), "contiguous")]]),
              lambda ts: np.hstack(ts), result=_first_dtype,
              errors=[ErrorCase(([],), RuntimeError, "hstack expects a non-empty TensorList")]),
        _case("vstack", list_samples([[((2, 3), "contiguous"), ((1, 3), "contiguous")],
                                      [((3,), "contiguous"), ((3,), "sliced")],
                                      [((2, 2), "transposed"), ((2,), "contiguous")]]),
              lambda ts: np.vstack(ts), result=_first_dtype),
        _case("dstack", list_samples([[((2, 3), "contiguous"), ((2, 3), "transposed")],
                                      [((3,), "contiguous"), ((3,), "sliced")],
                                      [((2, 3, 1), "contiguous"), ((2, 3), "contiguous")]]),
              lambda ts: np.dstack(ts), result=_first_dtype),
        _case("column_stack", list_samples([[((3,), "contiguous"), ((3, 2), "transposed")],
                                            [((3,), "sliced"), ((3,), "contiguous")],
                                            [((), "contiguous"), ((1, 2), "contiguous")]]),
              lambda ts: np.column_stack(ts), result=_first_dtype),
    ]


def _splits() -> list[OpCase]:
    return [
        _case("split", lambda d: [
            Sample((_a((5, 3), d), 2)),
            Sample((_a((5, 4), d, "transposed"), [1, 3], 1)),
            Sample((_a((3, 6), d, "sliced"), 6, -1)),
            Sample((_a((0, 2), d), 1)),
        ], _split_ref, check_strides=True, errors=[
            ErrorCase((_f32((5,)), [1, 2]), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 5"),
            ErrorCase((_f32(()), 1), RuntimeError, "split expects at least a 1-dimensional tensor"),
        ]),
        _case("chunk", lambda d: [
            Sample((_a((5, 3), d), 2)),
            Sample((_a((6, 4), d, "transposed"), 3, 1)),
            Sample((_a((4,), d, "sliced"), 6)),
            Sample((_a((0, 3), d), 2)),
        ], _chunk_ref, check_strides=True, errors=[
            ErrorCase((_f32((5,)), 0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
        ]),
        _case("tensor_split", lambda d: [
            Sample((_a((7, 3), d), 3)),
            Sample((_a((5, 4), d, "transposed"), [1, 3], 1)),
            Sample((_a((6,), d, "sliced"), [-2, 9])),
            Sample((_a((7,), d), _a((2,), "int64", values=[2, 5])), data_dependent=True),
            Sample((_a((7,), d), _a((), "int64", values=4)), data_dependent=True),
        ], _tensor_split_ref, check_strides=True, errors=[
            ErrorCase((_f32((5,)), 0), RuntimeError, "number of sections must be larger than 0, got 0"),
        ]),
        _case("movedim", lambda d: [
            Sample((_a((2, 3, 4), d), 0, -1)),
            Sample((_a((2, 3, 4), d, "sliced"), (0, 1), (2, 0))),
            Sample((_a((3, 4), d, "transposed"), 1, 0)),
        ], _movedim_ref, check_strides=True, errors=[
            ErrorCase((_f32((2, 3)), (0, 1), (1,)), RuntimeError, "movedim: Invalid source or destination dims"),
            ErrorCase((_f32((2, 3)), (0, 0), (0, 1)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
        ]),
        _case("unflatten", lambda d: [
            Sample((_a((6, 2), d), 0, (2, 3))),
            Sample((_a((3, 4), d, "transposed"), -1, (2, -1))),
            Sample((_a((2, 6), d, "sliced"), 1, (6,))),
        ], _unflatten_ref, errors=[
            ErrorCase((_f32((6,)), 0, (4, 2)), RuntimeError,
                      "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 0 (6) in the input "
                      "tensor"),
        ]),
        _case("broadcast_to", lambda d: [
            Sample((_a((3, 1), d), (2, 3, 4))),
            Sample((_a((4,), d, "sliced"), (3, -1))),
            Sample((_a((), d), (2,))),
        ], lambda x, size: np.broadcast_to(x, tuple(x.shape[i - len(size) + x.ndim] if s == -1 else s
                                                     for i, s in enumerate(size))), check_strides=True, errors=[
            ErrorCase((_f32((3,)), (2, 4)), RuntimeError, "The expanded size of the tensor (4) must match"),
        ]),
        _case("broadcast_tensors", lambda d: [
            Sample(([_a((3, 1), d), _a((4,), d, "sliced"), _a((), d)],)),
            Sample(([_a((2, 3), d, "transposed")],)),
        ], lambda ts: tuple(np.broadcast_arrays(*ts)), result=_first_dtype, errors=[
            ErrorCase(([_f32((3,)), _f32((4,))],), RuntimeError,
                      "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
        ]),
        *[_case(f"atleast_{n}d", lambda d: [Sample((_a(s, d, lay),)) for s, lay in
                                           [((), "contiguous"), ((3,), "sliced"), ((2, 3), "transposed"),
                                            ((2, 3, 4), "contiguous")]], _atleast_ref(n)) for n in (1, 2, 3)],
    ]


def _copies() -> list[OpCase]:
    return [
        _case("flip", lambda d: [
            Sample((_a((3, 4), d), (0,))),
            Sample((_a((3, 4), d, "transposed"), (0, 1))),
            Sample((_a((2, 3, 4), d, "sliced"), (-1, 0))),
            Sample((_a((), d), ())),
            Sample((_a((0, 2), d), (1,))),
        ], lambda x, dims: np.flip(x, dims) if dims else x.copy(), errors=[
            ErrorCase((_f32((2, 3)), (0, 0)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
            ErrorCase((_f32((2, 3)), (2,)), IndexError, "Dimension out of range"),
        ]),
        _case("fliplr", lambda d: [Sample((_a((3, 4), d, "transposed"),)), Sample((_a((2, 3, 4), d, "sliced"),))],
              np.fliplr, errors=[ErrorCase((_f32((3,)),), RuntimeError, "Input must be >= 2-d.")]),
        _case("flipud", lambda d: [Sample((_a((3, 4), d, "transposed"),)), Sample((_a((5,), d, "sliced"),))],
              np.flipud, errors=[ErrorCase((_f32(()),), RuntimeError, "Input must be >= 1-d.")]),
        _case("roll", lambda d: [
            Sample((_a((3, 4), d), 2)),
            Sample((_a((3, 4), d, "transposed"), (1, -3), (0, 1))),
            Sample((_a((2, 3, 4), d, "sliced"), -5, 2)),
            Sample((_a((0, 2), d), 1, 1)),
        ], _roll_ref, errors=[
            ErrorCase((_f32((2, 3)), (1, 2)), RuntimeError,
                      "`shifts` required to be of size 1 when `dims` is unspecified"),
            ErrorCase((_f32((2, 3)), (1, 2), (0,)), RuntimeError,
                      "shifts and dimensions must align. shifts: 2, dims:1"),
        ]),
        _case("rot90", lambda d: [
            Sample((_a((3, 4), d),)),
            Sample((_a((3, 4), d, "transposed"), 2)),
            Sample((_a((2, 3, 4), d, "sliced"), -1, (2, 0))),
            Sample((_a((2, 3), d), 4)),
        ], _rot90_ref, errors=[
            ErrorCase((_f32((3,)),), RuntimeError, "expected total dims >= 2, but got total dims = 1"),
            ErrorCase((_f32((3, 3)), 1, (0, 0)), RuntimeError, "expected rotation dims to be different"),
        ]),
        _case("repeat", lambda d: [
            Sample((_a((2, 3), d), (2, 1))),
            Sample((_a((2, 3), d, "transposed"), (2, 1, 3))),
            Sample((_a((4,), d, "sliced"), (3, 0))),
            Sample((_a((), d), (2,))),
        ], _repeat_ref, errors=[
            ErrorCase((_f32((2, 3)), (2,)), RuntimeError,
                      "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
        ]),
        _case("tile", lambda d: [
            Sample((_a((2, 3), d), (2,))),
            Sample((_a((2, 3), d, "transposed"), (2, 1, 3))),
            Sample((_a((4,), d, "sliced"), (3, 2))),
        ], _repeat_ref),
        _case("repeat_interleave", lambda d: [
            Sample((_a((2, 3), d), 2)),
            Sample((_a((2, 3), d, "transposed"), 3, 1)),
            Sample((_a((3, 4), d, "sliced"), _a((3,), "int64", values=[1, 0, 2]), 0), data_dependent=True),
            Sample((_a((2, 2), d), _a((1,), "int64", values=[2]), -1), {"output_size": 4}, data_dependent=True),
        ], _repeat_interleave_ref, errors=[
            ErrorCase((_f32((2, 3)), _a((2,), "int64", values=[1, 2]), 1), RuntimeError,
                      "repeats must have the same size as input along dim"),
            ErrorCase((_f32((2,)), -1), RuntimeError, "repeats can not be negative"),
        ]),
    ]


def cases() -> list[OpCase]:
    return [*_joins(), *_splits(), *_copies()]

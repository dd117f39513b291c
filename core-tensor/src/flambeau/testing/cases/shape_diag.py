"""Cases for diagonals, triangles and the creation extras (range, tril/triu_indices, complex, polar, meshgrid)."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import DEVICE, Arg, ErrorCase, OpCase, Sample
from ._common import same


# A factory's error cases run on the backend under test: without device= they would need the CPU backend.
_ON_DEVICE = {"device": DEVICE}


def _case(op, samples, ref, errors=(), dtypes=P.ALL, result=same, **kw):
    return OpCase(op, dtypes, samples, ref, result, errors=lambda: list(errors), **kw)


def _a(shape, dtype, layout="contiguous", **kw):
    return Arg(shape, dtype, layout, **kw)


def _f32(shape):
    return Arg(shape, "float32")


def _diagonal_ref(x, offset=0, dim1=0, dim2=1):
    return np.diagonal(x, offset, dim1, dim2)


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    idx = np.arange(x.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., rows, cols] = x
    ndim = x.ndim + 1
    a, b = dim1 % ndim, dim2 % ndim
    # out has the matrix dims last; move them to (dim1, dim2)
    return np.moveaxis(out, (-2, -1), (a, b))


def _diag_ref(x, diagonal=0):
    return np.diag(x, diagonal)


def _diagflat_ref(x, offset=0):
    return np.diagflat(x, offset)


def _tri_ref(lower):
    def ref(x, diagonal=0):
        return np.tril(x, diagonal) if lower else np.triu(x, diagonal)
    return ref


def _diags() -> list[OpCase]:
    tri_samples = lambda d: [  # noqa: E731
        Sample((_a((4, 4), d),)),
        Sample((_a((3, 5), d, "transposed"), 1)),
        Sample((_a((2, 3, 4), d, "sliced"), -1)),
        Sample((_a((0, 3), d), 0)),
        Sample((_a((4, 3), d), 7)),
    ]
    return [
        _case("diagonal", lambda d: [
            Sample((_a((3, 4), d),)),
            Sample((_a((3, 4), d, "transposed"), 1)),
            Sample((_a((2, 3, 4), d, "sliced"), -1, 2, 0)),
            Sample((_a((3, 3), d), 5)),
            Sample((_a((2, 3, 4), d), 0, -1, -2)),
        ], _diagonal_ref, upcast=False, check_strides=True, errors=[
            ErrorCase((_f32((3, 3)), 0, 1, 1), RuntimeError, "diagonal dimensions cannot be identical 1, 1"),
            ErrorCase((_f32((3,)),), IndexError, "Dimension out of range"),
        ]),
        _case("diag_embed", lambda d: [
            Sample((_a((3,), d),)),
            Sample((_a((2, 3), d, "transposed"), 1)),
            Sample((_a((2, 4), d, "sliced"), -2, 0, 2)),
            Sample((_a((2, 3), d), 0, -1, 0)),
        ], _diag_embed_ref, upcast=False, errors=[
            ErrorCase((_f32((3,)), 0, 0, 0), RuntimeError, "diagonal dimensions cannot be identical 0, 0"),
        ]),
        _case("diag", lambda d: [
            Sample((_a((3,), d),)), Sample((_a((4,), d, "sliced"), -1)),
            Sample((_a((3, 4), d, "transposed"), 1)), Sample((_a((3, 3), d),)),
        ], _diag_ref, upcast=False, errors=[
            ErrorCase((_f32((2, 2, 2)),), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
        ]),
        _case("diagflat", lambda d: [
            Sample((_a((3,), d),)), Sample((_a((2, 2), d, "transposed"), 1)), Sample((_a((), d), -1)),
        ], _diagflat_ref, upcast=False),
        _case("tril", tri_samples, _tri_ref(True), upcast=False, errors=[
            ErrorCase((_f32((3,)),), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
        ]),
        _case("triu", tri_samples, _tri_ref(False), upcast=False, errors=[
            ErrorCase((_f32((3,)),), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
        ]),
    ]


def _fb(name: str):
    import flambeau

    return getattr(flambeau, name)


def _range_ref(start, end, step=1, dtype=None, device=None, requires_grad=False):
    n = int(np.floor((end - start) / step)) + 1
    return start + step * np.arange(n, dtype=np.float64)


def _indices_ref(lower):
    def ref(row, col, offset=0, dtype=None, device=None, requires_grad=False):
        r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
        return np.stack([r, c]).astype(np.int64).reshape(2, -1)
    return ref


def _factory_dtype(default):
    return lambda s: s.kwargs["dtype"].name if "dtype" in s.kwargs else default


def _creation() -> list[OpCase]:
    def range_samples(dtype):
        kw = {"dtype": _fb(dtype), "device": DEVICE}
        out = [Sample((0, 4), kw), Sample((1.0, 2.0, 0.25), kw), Sample((3, -3, -2), kw) if P.category(dtype) != 1
               or dtype != "uint8" else Sample((3, 9, 2), kw)]
        if dtype == "float32":
            out.append(Sample((0, 3), {"device": DEVICE}, note="default float dtype"))
        return out

    def indices_samples(dtype):
        kw = {"dtype": _fb(dtype), "device": DEVICE}
        return [Sample((3, 3), kw), Sample((4, 3, 1), kw), Sample((3, 5, -1), kw), Sample((0, 3), kw),
                Sample((3, 4, -9), kw)] + ([Sample((2, 3), {"device": DEVICE}, note="int64 default")]
                                            if dtype == "int64" else [])

    floats = ("float16", "float32", "float64")
    return [
        _case("range", range_samples, _range_ref, dtypes=("int32", "int64", "float32", "float64"),
              result=_factory_dtype(P.DEFAULT_FLOAT), errors=[
                  ErrorCase((0, 1, 0), RuntimeError, "step must be nonzero", kwargs=_ON_DEVICE),
                  ErrorCase((0, 3, -1), RuntimeError, "upper bound and larger bound inconsistent with step sign",
                            kwargs=_ON_DEVICE),
              ]),
        _case("tril_indices", indices_samples, _indices_ref(True), dtypes=("int32", "int64"),
              result=_factory_dtype("int64"),
              errors=[ErrorCase((-1, 3), RuntimeError, "row must be non-negative, got-1",
                                kwargs=_ON_DEVICE)]),
        _case("triu_indices", indices_samples, _indices_ref(False), dtypes=("int32", "int64"),
              result=_factory_dtype("int64"),
              errors=[ErrorCase((3, -2), RuntimeError, "col must be non-negative, got-2",
                                kwargs=_ON_DEVICE)]),
        _case("complex", lambda d: [
            Sample((_a((3, 4), d), _a((3, 4), d, "transposed"))),
            Sample((_a((2, 1, 4), d), _a((3, 1), d))),
            Sample((_a((), d), _a((5,), d, "sliced"))),
        ], lambda re, im: re + 1j * im, dtypes=floats, result=lambda s: P.to_complex(s.args[0].dtype), errors=[
            ErrorCase((_a((2,), "int64"), _a((2,), "int64")), RuntimeError,
                      "Expected both inputs to be Half, Float or Double tensors but got Long and Long"),
            ErrorCase((_f32((2,)), _a((2,), "float64")), RuntimeError,
                      "Expected object of scalar type Float but got scalar type Double for second argument"),
        ]),
        _case("polar", lambda d: [
            Sample((_a((3, 4), d, low=0.0), _a((3, 4), d, "transposed"))),
            Sample((_a((5,), d, "sliced", low=0.0), _a((), d))),
        ], lambda r, t: r * np.cos(t) + 1j * r * np.sin(t), dtypes=("float32", "float64"),
            result=lambda s: P.to_complex(s.args[0].dtype)),
        _case("meshgrid", lambda d: [
            Sample(([_a((3,), d), _a((2,), d, "sliced")],), {"indexing": "ij"}),
            Sample(([_a((3,), d), _a((2,), d), _a((), d)],), {"indexing": "xy"}),
            Sample(([_a((4,), d)],), {"indexing": "xy"}),
        ], lambda ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)), upcast=False,
            result=lambda s: s.args[0][0].dtype, errors=[
                ErrorCase(([_f32((2, 2))],), RuntimeError, "Expected 0D or 1D tensor in the tensor list",
                          {"indexing": "ij"}),
                ErrorCase(([_f32((2,)), _a((2,), "float64")],), RuntimeError,
                          "Expected all tensors in the tensor list to have the same dtype", {"indexing": "ij"}),
                ErrorCase(([_f32((2,))],), RuntimeError, "indexing must be one of \"xy\" or \"ij\"",
                          {"indexing": "yx"}),
            ]),
    ]


def cases() -> list[OpCase]:
    return [*_diags(), *_creation()]
